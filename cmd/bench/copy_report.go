package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"platformapi/resources"
)

// The three ways a round copies the model.
const (
	wayCp     = "cp -r"
	wayCpSync = "cp -r && sync"
	wayAgent  = "node agent: ready (PUT, poll until ready)"
	// wayAgentWritten is measured within wayAgent's copy.
	wayAgentWritten = "node agent: every byte copied (bytes_done = bytes_total)"
)

// copyResults are the times of each way, round by round, and the CPU
// time each used (the agent's: its whole process, the bench's polling
// included).
type copyResults struct {
	times map[string][]time.Duration
	cpu   map[string][]time.Duration
	loads []string
}

func (r *copyResults) add(way string, d, cpu time.Duration) {
	if r.times == nil {
		r.times, r.cpu = map[string][]time.Duration{}, map[string][]time.Duration{}
	}
	r.times[way] = append(r.times[way], d)
	if cpu > 0 {
		r.cpu[way] = append(r.cpu[way], cpu)
	}
}

// copyRound copies the model each way once, in an order that rotates
// with the round, emptying the destination and syncing before each copy.
func copyRound(c copyConfig, ag *benchAgent, files []resources.AgentFile, round int,
	r *copyResults) error {
	src := filepath.Join(c.dir, "store", "models", "bench", "model")
	dst := filepath.Join(c.dest, "cp", "model")
	ways := []string{wayCp, wayCpSync, wayAgent}
	for i := range ways {
		way := ways[(i+round)%len(ways)]
		if err := emptyDestinations(ag, dst); err != nil {
			return err
		}
		if err := settle(c); err != nil {
			return err
		}
		var took, written, cpu time.Duration
		var err error
		switch way {
		case wayCp:
			took, cpu, err = timeCommand(fmt.Sprintf("cp -r %q %q", src, dst))
		case wayCpSync:
			took, cpu, err = timeCommand(fmt.Sprintf("cp -r %q %q && sync", src, dst))
		default:
			before := selfCPU()
			written, took, err = ag.agentCopy(files)
			cpu = selfCPU() - before
			r.add(wayAgentWritten, written, 0)
		}
		if err != nil {
			return err
		}
		log.Printf("round %d: %s %.2f s (CPU %.2f s)", round+1, way, took.Seconds(), cpu.Seconds())
		r.add(way, took, cpu)
	}
	r.loads = append(r.loads, loadAvg())
	return emptyDestinations(ag, dst)
}

// emptyDestinations removes cp's copy and the agent's cache.
func emptyDestinations(ag *benchAgent, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return ag.client.Remove(context.Background(), ag.ep, "bench/model")
}

// median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// print writes the results as Markdown.
func (r *copyResults) print(w io.Writer, c copyConfig, files []resources.AgentFile) {
	var total int64
	for _, f := range files {
		total += f.SizeBytes
	}
	fmt.Fprintf(w, "## Copy: node agent beside cp -r (%s)\n\n", time.Now().Format("2006-01-02"))
	fmt.Fprintf(w, "- machine: %s\n- store: %s (%s); copies into %s (%s)\n", machine(), c.dir, fsType(c.dir),
		c.dest, fsType(c.dest))
	fmt.Fprintf(w, "- model: %d files, %.2f GiB (%d × %d MiB shards and 5 small files), SHA256SUMS\n",
		len(files), float64(total)/(1<<30), c.bigFiles, c.bigMiB)
	fmt.Fprintf(w, "- page cache: %s; load average after each round: %s\n\n",
		map[bool]string{true: "dropped before each copy", false: "warm (the source stays cached)"}[c.dropCaches],
		strings.Join(r.loads, " | "))
	fmt.Fprintf(w, "| way | %s | median | MiB/s (median) | CPU time (median) |\n|---|%s---|---|---|\n",
		roundHeads(c.rounds), strings.Repeat("---|", c.rounds))
	for _, way := range []string{wayCp, wayAgentWritten, wayCpSync, wayAgent} {
		m := median(r.times[way])
		var cells []string
		for _, d := range r.times[way] {
			cells = append(cells, fmt.Sprintf("%.2f s", d.Seconds()))
		}
		cpu := "(within the next)"
		if len(r.cpu[way]) > 0 {
			cpu = fmt.Sprintf("%.2f s", median(r.cpu[way]).Seconds())
		}
		fmt.Fprintf(w, "| %s | %s | %.2f s | %.0f | %s |\n", way, strings.Join(cells, " | "), m.Seconds(),
			float64(total)/(1<<20)/m.Seconds(), cpu)
	}
	ratio := func(ref, way string) float64 {
		return median(r.times[ref]).Seconds() / median(r.times[way]).Seconds()
	}
	fmt.Fprintf(w, "\nSpeed relative to the reference (median time of the reference / median time "+
		"of the agent; target ≥ 0.80):\n\n- agent ready (synced, published) vs `cp -r`: **%.2f**\n"+
		"- agent ready vs `cp -r && sync` (both on the disk): **%.2f**\n"+
		"- agent, every byte copied vs `cp -r`: **%.2f**\n",
		ratio(wayCp, wayAgent), ratio(wayCpSync, wayAgent), ratio(wayCp, wayAgentWritten))
}

func roundHeads(n int) string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("round %d", i+1))
	}
	return strings.Join(s, " | ")
}

// fsType names the file system holding dir, from /proc/mounts.
func fsType(dir string) string {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return "?"
	}
	best, kind := "", "?"
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(dir, f[1]) && len(f[1]) > len(best) {
			best, kind = f[1], f[2]+" on "+f[0]
		}
	}
	return kind
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(a, b) })
}

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// report collects results by key and prints them as Markdown.
type report struct {
	started time.Time
	cfg     config
	machine string
	redis   bool
	loadAvg []string
	keys    []string
	names   map[string]string
	results map[string]result
}

func (r *report) add(key, name string, res result) {
	if r.results == nil {
		r.results, r.names = map[string]result{}, map[string]string{}
		r.loadAvg = append(r.loadAvg, loadAvg())
	}
	prev, seen := r.results[key]
	if !seen {
		r.keys = append(r.keys, key)
	} else {
		res = prev.merge(res)
	}
	r.names[key], r.results[key] = name, res
}

// machine describes the CPU, memory and software of this run.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s, GOMAXPROCS %d", runtime.NumCPU(), model, runtime.Version(), runtime.GOMAXPROCS(0))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// ratio is a/b of two results' requests per second; no figure unless both
// loads are valid (every answer a success).
func (r *report) ratio(a, b string) string {
	ra, rb := r.results[a], r.results[b]
	if !ra.valid() || !rb.valid() || rb.rps == 0 {
		return notComparable
	}
	return fmt.Sprintf("%.2f", ra.rps/rb.rps)
}

// inverse is b/a: how many times slower a is (for the page at depth).
func (r *report) inverse(a, b string) string {
	ra, rb := r.results[a], r.results[b]
	if !ra.valid() || !rb.valid() || ra.rps == 0 {
		return notComparable
	}
	return fmt.Sprintf("%.2f", rb.rps/ra.rps)
}

// notComparable stands for a ratio of loads that did not run or had
// answers other than 2xx.
const notComparable = "– (not comparable)"

func (r *report) print(w io.Writer) {
	r.loadAvg = append(r.loadAvg, loadAvg())
	fmt.Fprintf(w, "## Run of %s\n\n", r.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %s. wrk -t%d -c%d, %v per load, %d round(s) taking turns; Redis: %v; "+
		"tokens warmed first: %v; access log: %s; load average before/after: %s.\n\n", r.machine,
		r.cfg.threads, r.cfg.conns, r.cfg.duration, max(1, r.cfg.rounds), r.redis, r.cfg.warm,
		r.cfg.accessLog(), strings.Join(r.loadAvg, " / "))
	if r.cfg.profile != "" {
		fmt.Fprintf(w, "Profiled (CPU and allocations into %s): figures a little low.\n\n", r.cfg.profile)
	}
	fmt.Fprintln(w, "| load | req/s | requests | non-2xx (wrk / server) | p50 | p99 | peak RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, k := range r.keys {
		res := r.results[k]
		rss := "–"
		if res.rssKB > 0 {
			rss = fmt.Sprintf("%.1f MB", float64(res.rssKB)/1024)
		}
		fmt.Fprintf(w, "| %s | %.0f | %d | %d / %d | %s | %s | %s |\n", r.names[k], res.rps, res.requests,
			res.non2xx, res.serverNon2xx, res.p50, res.p99, rss)
	}
	for _, k := range r.keys {
		switch res := r.results[k]; {
		case res.failed != "":
			fmt.Fprintf(w, "\n**%s was not run: %s**\n", r.names[k], res.failed)
		case !res.valid():
			fmt.Fprintf(w, "\n**%s had answers other than 2xx (%d seen by wrk, %d counted by the server): "+
				"its figure is not comparable.**\n", r.names[k], res.non2xx, res.serverNon2xx)
			if len(res.refusals) > 0 {
				fmt.Fprint(w, "\nThe server's log on them (at most the first five lines):\n\n")
			}
			for _, line := range res.refusals {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
	r.printCPU(w)
	r.printTargets(w)
}

// printCPU shows the CPU each side spent per request: on a machine whose
// cores all sides share, their sum bounds the throughput. The client is wrk,
// or this process for a paced load (runPaced).
func (r *report) printCPU(w io.Writer) {
	fmt.Fprint(w, "\nCPU per request (µs), by process:\n\n")
	fmt.Fprintln(w, "| load | server | PostgreSQL | Redis | client | sum |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, k := range r.keys {
		res := r.results[k]
		if res.requests == 0 {
			continue
		}
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(res.requests) }
		sum := res.cpu["server"] + res.cpu["postgres"] + res.cpu["redis"] + res.cpu["wrk"]
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", r.names[k], per(res.cpu["server"]),
			per(res.cpu["postgres"]), per(res.cpu["redis"]), per(res.cpu["wrk"]), per(sum))
	}
}

func (r *report) printTargets(w io.Writer) {
	fmt.Fprintln(w, "\n| target | measured | goal |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| GET vs bare chi+pgx | %s | ≥ 0.70 |\n", r.ratio("get", "bare"))
	fmt.Fprintf(w, "| MCP tools/call vs REST GET | %s | ≥ 0.85 |\n", r.ratio("mcp", "get"))
	fmt.Fprintf(w, "| bare MCP (mcp-go) vs bare GET | %s | (a bound) |\n", r.ratio("baremcp", "bare"))
	fmt.Fprintf(w, "| keyed POST vs plain POST | %s | ≥ 0.77 |\n", r.ratio("keyed", "post"))
	fmt.Fprintf(w, "| audit page at depth: time vs page 1 | %s | ≤ 1.5 |\n", r.inverse("auditdeep", "audit1"))
	rss := notComparable
	if res := r.results["rss"]; res.valid() && res.rssKB > 0 {
		rss = fmt.Sprintf("%.1f MB", float64(res.rssKB)/1024)
	}
	fmt.Fprintf(w, "| peak RSS at 64 connections, 2,000 live tokens | %s | < 100 MB |\n", rss)
	r.printVerifyTargets(w)
}

// printVerifyTargets adds the targets of /ai-gateway/verify: throughput
// beside a bare net/http 200 under the same load, p99, and the server's
// peak RSS with 10,000 live keys during that load.
func (r *report) printVerifyTargets(w io.Writer) {
	v := r.results["verify"]
	p99, rss := notComparable, notComparable
	if v.valid() {
		p99 = v.p99
		if v.rssKB > 0 {
			rss = fmt.Sprintf("%.1f MB", float64(v.rssKB)/1024)
		}
	}
	fmt.Fprintf(w, "| /ai-gateway/verify vs bare net/http 200 | %s | ≥ 0.80 |\n", r.ratio("verify", "bare200"))
	fmt.Fprintf(w, "| /ai-gateway/verify vs bare 200 with its four headers | %s | (a bound) |\n",
		r.ratio("verify", "bare200h"))
	fmt.Fprintf(w, "| bare 200 with verify's four headers vs bare 200 | %s | (a bound) |\n",
		r.ratio("bare200h", "bare200"))
	fmt.Fprintf(w, "| /ai-gateway/verify p99 | %s | ≤ 2 ms |\n", p99)
	paced := notComparable
	if pv, pb := r.results["verify-paced"], r.results["bare200-paced"]; pv.valid() && pb.valid() {
		paced = fmt.Sprintf("%s (bare 200: %s)", pv.p99, pb.p99)
	}
	fmt.Fprintf(w, "| /ai-gateway/verify p99 paced at %d req/s | %s | ≤ 2 ms |\n", pacedRate, paced)
	fmt.Fprintf(w, "| peak RSS, 10,000 live gateway keys (verify load) | %s | < 100 MB |\n", rss)
}

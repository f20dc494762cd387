package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// copyConfig is what `bench copy` measures.
type copyConfig struct {
	dir        string // work directory (store and destinations), on the disk to measure
	dest       string // where the copies go, when not in dir (e.g. a tmpfs: no disk)
	rounds     int
	bigFiles   int // shards of the synthetic model
	bigMiB     int // MiB per shard
	dropCaches bool
	keep       bool
}

// runCopy is `bench copy`: the node agent's copy of a synthetic 2 GiB
// model beside `cp -r` of the same files, on one disk, rounds taking turns.
func runCopy(args []string) {
	var c copyConfig
	fs := flag.NewFlagSet("copy", flag.ExitOnError)
	fs.StringVar(&c.dir, "dir", "", "work directory on the disk to measure "+
		"(default: a new one under $TMPDIR)")
	fs.StringVar(&c.dest, "dest", "", "directory the copies go to (default: in the work directory); "+
		"a tmpfs such as /dev/shm measures the copy without the disk")
	fs.IntVar(&c.rounds, "rounds", 5, "rounds; each copies the model with cp -r, cp -r + sync and the agent")
	fs.IntVar(&c.bigFiles, "shards", 4, "weight shards of the synthetic model")
	fs.IntVar(&c.bigMiB, "shard-mib", 512, "MiB per shard")
	fs.BoolVar(&c.dropCaches, "drop-caches", false,
		"drop the page cache before each copy (root only): cold reads")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory")
	_ = fs.Parse(args)
	if err := benchCopy(c); err != nil {
		log.Fatal(err)
	}
}

func benchCopy(c copyConfig) error {
	if c.rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}
	cleanup, err := makeWorkDirs(&c)
	defer cleanup()
	if err != nil {
		return err
	}
	store, cache := filepath.Join(c.dir, "store"), filepath.Join(c.dest, "cache")
	log.Printf("writing the synthetic model (%d × %d MiB and small files) under %s",
		c.bigFiles, c.bigMiB, store)
	files, err := writeSyntheticModel(filepath.Join(store, "models", "bench", "model"), c)
	if err != nil {
		return err
	}
	ag, err := startBenchAgent(store, cache)
	if err != nil {
		return err
	}
	defer ag.close()
	res := &copyResults{}
	for round := range c.rounds {
		if err := copyRound(c, ag, files, round, res); err != nil {
			return err
		}
	}
	res.print(os.Stdout, c, files)
	return nil
}

// makeWorkDirs makes the work directory (unless given) and the copies'
// directory in c.dest (the work directory unless given); cleanup removes
// what is not to be kept.
func makeWorkDirs(c *copyConfig) (cleanup func(), err error) {
	var remove []string
	cleanup = func() {
		for _, d := range remove {
			_ = os.RemoveAll(d)
		}
	}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "platformapi-bench-copy-"); err != nil {
			return cleanup, err
		}
	}
	if !c.keep {
		remove = append(remove, c.dir)
	}
	if c.dest == "" {
		c.dest = c.dir
	} else if c.dest, err = os.MkdirTemp(c.dest, "platformapi-bench-copy-"); err != nil {
		return cleanup, err
	} else {
		remove = append(remove, c.dest)
	}
	for _, d := range []string{filepath.Join(c.dir, "store"), filepath.Join(c.dest, "cache"),
		filepath.Join(c.dest, "cp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return cleanup, err
		}
	}
	return cleanup, nil
}

// writeSyntheticModel writes the shards (pseudo-random bytes), a few small
// files and SHA256SUMS, and answers the files as the agent must report them.
func writeSyntheticModel(dir string, c copyConfig) ([]resources.AgentFile, error) {
	var seed [32]byte
	_, _ = rand.Read(seed[:])
	src := mrand.NewChaCha8(seed)
	sizes := map[string]int64{"config.json": 700, "generation_config.json": 180,
		"tokenizer.json": 9 << 20, "tokenizer_config.json": 50 << 10, "model.safetensors.index.json": 30 << 10}
	for i := range c.bigFiles {
		sizes[fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, c.bigFiles)] = int64(c.bigMiB) << 20
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []resources.AgentFile
	var sums []byte
	for _, name := range sortedKeys(sizes) {
		sum, err := writeRandomFile(filepath.Join(dir, name), sizes[name], src)
		if err != nil {
			return nil, err
		}
		files = append(files, resources.AgentFile{Path: name, SizeBytes: sizes[name], SHA256: sum})
		sums = fmt.Appendf(sums, "%s  %s\n", sum, name)
	}
	return files, os.WriteFile(filepath.Join(dir, resources.CentralManifestName), sums, 0o644)
}

// writeRandomFile writes size bytes from src to name and answers their sha256.
func writeRandomFile(name string, size int64, src io.Reader) (string, error) {
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.CopyN(io.MultiWriter(f, h), src, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return hex.EncodeToString(h.Sum(nil)), err
}

// benchAgent is a node agent served over HTTP on loopback, and its client.
type benchAgent struct {
	agent  *nodeagent.Agent
	srv    *http.Server
	client *nodeagent.Client
	ep     resources.AgentEndpoint
}

func startBenchAgent(store, cache string) (*benchAgent, error) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	key := resources.DeriveNodeKey(resources.Pepper("bench"), "bench", nonce)
	a, err := nodeagent.New(nodeagent.Config{StoreRoot: store, CacheRoot: cache, Key: key})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &benchAgent{agent: a, srv: srv, client: nodeagent.NewClient(nil),
		ep: resources.AgentEndpoint{Hostname: "bench", URL: "http://" + ln.Addr().String(), Key: key}}, nil
}

func (b *benchAgent) close() { _ = b.srv.Close(); _ = b.agent.Close() }

// agentCopy asks the agent for the copy and polls until it is ready; it
// answers the times from the request to every byte copied
// (bytes_done reaching bytes_total: what cp -r does) and to the cache
// seen ready (every file also synced to the disk and published).
func (b *benchAgent) agentCopy(files []resources.AgentFile) (written, ready time.Duration, err error) {
	ctx := context.Background()
	start := time.Now()
	if _, err := b.client.Copy(ctx, b.ep, "bench/model", "models/bench/model"); err != nil {
		return 0, 0, err
	}
	for {
		c, err := b.client.Cache(ctx, b.ep, "bench/model")
		switch {
		case err != nil:
			return 0, 0, err
		case c == nil || c.State == resources.AgentCacheFailed:
			return 0, 0, fmt.Errorf("the agent's copy failed: %+v", c)
		case c.State == resources.AgentCacheReady:
			ready = time.Since(start)
			if d := gocmp.Diff(files, c.Files); d != "" {
				return 0, 0, fmt.Errorf("the agent's digests differ (-want +got):\n%s", d)
			}
			return cmp.Or(written, ready), ready, nil
		case written == 0 && c.BytesDone == c.BytesTotal:
			written = time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// timeCommand runs a shell command line and answers how long it took and
// the CPU time (user and system) it and the commands it waited for used.
func timeCommand(line string) (wall, cpu time.Duration, err error) {
	start := time.Now()
	cmd := exec.Command("sh", "-c", line)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w: %s", line, err, out)
	}
	return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// selfCPU is the CPU time (user and system) this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// settle syncs every file system and, when asked, drops the page cache, so
// each copy starts from the same state.
func settle(c copyConfig) error {
	if err := exec.Command("sync").Run(); err != nil {
		return err
	}
	if c.dropCaches {
		return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200)
	}
	return nil
}

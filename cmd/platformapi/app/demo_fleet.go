package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// demoFleet is the demo's node agents: one real agent per node of the demo
// world's roster (a node enrolled by hand keeps its own agent), in this
// process, over directories under <data-dir>/demo-fleet and served on a
// loopback port each, so a demo copy moves real bytes an operator can ls.
type demoFleet struct {
	dir     string // <data-dir>/demo-fleet, or a private directory
	private bool   // dir was made for this process: removed on close
	agents  []*nodeagent.Agent
	servers []*http.Server
	urls    map[string]string // hostname → its agent's URL, once started
}

// demoSlowAgent is the demo node whose agent may read 64 bytes a second:
// a copy onto it moves one span (16 KiB) at once, then one every four
// minutes, so the demo always has a copy in progress to look at.
const (
	demoSlowAgent = "gpu-fra1-01-vm1"
	demoSlowRate  = 64
)

// newDemoFleet places the demo fleet under the data directory, or (a Main
// opened without one, as tests do) in a private directory of its own.
func (m *Main) newDemoFleet() (*demoFleet, error) {
	if m.opts.DataDir != "" {
		return &demoFleet{dir: demoFleetDir(m.opts.DataDir), urls: map[string]string{}}, nil
	}
	dir, err := os.MkdirTemp("", "platformapi-demo-fleet-")
	return &demoFleet{dir: dir, private: true, urls: map[string]string{}}, err
}

// startDemoFleet writes the demo store (synthetic weights of every model
// with a central copy) and starts an agent per node of the demo roster
// still in the roster, enrolled with the node's key (minted by the demo
// administrator the first time) and its agent_url pointing at it. Close
// stops them.
func (m *Main) startDemoFleet(ctx context.Context) error {
	if m.demo == nil {
		f, err := m.newDemoFleet()
		if err != nil {
			return err
		}
		m.demo = f
	}
	store := filepath.Join(m.demo.dir, "store")
	for _, repo := range demoCentral {
		if err := nodeagent.WriteCentralCopy(store, "models/"+repo, demoWeights(repo)); err != nil {
			return err
		}
	}
	demoHosts, err := demoRosterHosts()
	if err != nil {
		return err
	}
	var hosts []string // a node enrolled by hand keeps its own agent
	if err := m.db.NewRaw("SELECT hostname FROM ai_nodes WHERE hostname IN (?) ORDER BY hostname",
		bun.In(demoHosts)).Scan(ctx, &hosts); err != nil {
		return err
	}
	for _, host := range hosts {
		if err := m.startDemoAgent(ctx, store, host); err != nil {
			return fmt.Errorf("demo agent of %s: %w", host, err)
		}
	}
	return nil
}

// demoRosterHosts are the hostnames of the demo world's roster.
func demoRosterHosts() ([]string, error) {
	f, err := resources.ParseInventory("demo_inventory.yaml", demoInventory)
	hosts := make([]string, 0, len(f.Nodes))
	for _, n := range f.Nodes {
		hosts = append(hosts, n.Hostname)
	}
	return hosts, err
}

// startDemoAgent serves one node's agent on a loopback port; an agent
// already running (the demo set up again in this process) only gets its
// agent_url back, which the roster's import cleared.
func (m *Main) startDemoAgent(ctx context.Context, store, host string) error {
	if url, ok := m.demo.urls[host]; ok {
		_, err := m.db.NewRaw("UPDATE ai_nodes SET agent_url = ? WHERE hostname = ?", url, host).Exec(ctx)
		return err
	}
	cache := filepath.Join(m.demo.dir, host, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if _, err := m.db.NewRaw("UPDATE ai_nodes SET agent_url = ? WHERE hostname = ?",
		"http://"+ln.Addr().String(), host).Exec(ctx); err != nil {
		return errors.Join(err, ln.Close())
	}
	key, err := m.demoNodeKey(ctx, host)
	if err != nil {
		return errors.Join(err, ln.Close())
	}
	keyFile := demoKeyFile(m.demo.dir, host)
	if err := writeDemoKey(keyFile, key); err != nil {
		return errors.Join(err, ln.Close())
	}
	cfg := nodeagent.Config{StoreRoot: store, CacheRoot: cache, KeyFile: keyFile,
		Logger: m.opts.Logger.With("demo_agent", host)}
	if host == demoSlowAgent {
		cfg.MaxBytesPerSecond = demoSlowRate
	}
	a, err := nodeagent.New(cfg)
	if err != nil {
		return errors.Join(err, ln.Close())
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	m.demo.agents, m.demo.servers = append(m.demo.agents, a), append(m.demo.servers, srv)
	m.demo.urls[host] = "http://" + ln.Addr().String()
	return nil
}

// demoNodeKey is the node's key: derived from its enrolment, or minted by
// the demo administrator when it has none yet.
func (m *Main) demoNodeKey(ctx context.Context, host string) (string, error) {
	enrolled, err := m.store.NodeAgentEnrolments(ctx, []string{host})
	if err != nil {
		return "", err
	}
	if len(enrolled) == 1 {
		return resources.DeriveNodeKey(m.pepper, host, enrolled[0].KeyNonce), nil
	}
	k, err := m.Portal().MintNodeKey(ctx, resources.Actor{Label: demoAdmin}, host)
	return k.Key, err
}

// demoFleetDir is where the demo fleet lives under a data directory.
func demoFleetDir(dataDir string) string { return filepath.Join(dataDir, "demo-fleet") }

// demoKeyFile is the key file of host's demo agent in the fleet directory
// dir: like a real agent's --key-file, it re-reads it within a second, so a
// key rotated by `portal node-key` (which writes it there) needs no
// restart.
func demoKeyFile(dir, host string) string { return filepath.Join(dir, host, "node.key") }

// writeDemoKey replaces a demo agent's key file with key (0600), never
// leaving it half-written: the key goes to a temporary file of its own in
// the same directory (two writers never share one), which then replaces
// the key file.
func writeDemoKey(file, key string) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".node.key-*") // 0600
	if err != nil {
		return fmt.Errorf("write the demo agent's key file: %w", err)
	}
	_, err = tmp.WriteString(key + "\n")
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write the demo agent's key file %s: %w", file, err)
	}
	return nil
}

// close stops the demo agents and their listeners (and removes a private
// directory).
func (f *demoFleet) close() {
	for _, srv := range f.servers {
		_ = srv.Close()
	}
	for _, a := range f.agents {
		_ = a.Close()
	}
	if f.private {
		_ = os.RemoveAll(f.dir)
	}
}

// demoWeights are a model's synthetic weights: a tokenizer and two shards
// of pseudo-random bytes seeded by the repo, 4.06 MiB in all, the same on
// every run. Every file is at least one throttle span (16 KiB), so the
// slow agent's copy always stands at exactly one span.
func demoWeights(repo string) map[string][]byte {
	seed := sha256.Sum256([]byte(repo))
	rng := rand.NewChaCha8(seed)
	shard := func(n int) []byte {
		b := make([]byte, n)
		_, _ = rng.Read(b)
		return b
	}
	return map[string][]byte{
		"tokenizer.json":                   shard(64 << 10),
		"model-00001-of-00002.safetensors": shard(2 << 20),
		"model-00002-of-00002.safetensors": shard(2 << 20),
	}
}

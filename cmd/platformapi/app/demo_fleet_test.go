package app

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// TestDemoFleet_GPUMemoryOfTheRosterClassPassthroughCountedOnce: the
// simulated monitoring of `serve --demo` reports each node's GPUs with the
// memory of its roster class (H100 80 GB, L40S 48 GB, decimal), and the
// H100 gpu-fra1-01 passes through to its VM counted once, on the VM: 7 on
// the host, 1 on the VM, 8 H100 in all; the standby L40S spare reports
// none. Used VRAM is the loaded models'.
func TestDemoFleet_GPUMemoryOfTheRosterClassPassthroughCountedOnce(t *testing.T) {
	d := startDemo(t, pgtest.DSN(t), time.Time{})
	type figures struct{ GPUs, VRAMTotal, VRAMUsed any }
	got, byClass := map[string]figures{}, map[string]float64{}
	for _, n := range d.all("/ai/nodes", url.Values{}) {
		got[n["hostname"].(string)] = figures{n["gpu_count"], n["vram_total_bytes"], n["vram_used_bytes"]}
		if c, ok := n["gpu_count"].(float64); ok {
			byClass[n["gpu_class"].(string)] += c
		}
	}
	want := map[string]figures{
		"gpu-fra1-01":     {7.0, 560e9, 61e9},
		"gpu-fra1-01-vm1": {1.0, 80e9, 2.3e9},
		"gpu-fra1-02":     {4.0, 192e9, 0.0},
		"gpu-fra1-03":     {nil, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("GPU figures (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"H100": 8, "L40S": 4}, byClass); diff != "" {
		t.Fatalf("GPUs reporting by class (-want +got)\n%s", diff)
	}
}

// TestDemoFleet_HealthOfEveryNodeAndGPUClassTotals: on the demo world the
// head, its VM and gpu-fra1-02's GPUs are as the roster's specs say
// (passthrough counted on the VM), gpu-fra1-02's root disk is 93.5% full
// (degraded) and the standby spare is down (offline); the page's
// gpu_classes total the fleet, the spare's unknown GPUs counted apart.
func TestDemoFleet_HealthOfEveryNodeAndGPUClassTotals(t *testing.T) {
	d := startDemo(t, pgtest.DSN(t), time.Time{})
	got := map[string][2]any{}
	for _, n := range d.all("/ai/nodes", url.Values{}) {
		got[n["hostname"].(string)] = [2]any{n["health"], n["health_reason"]}
	}
	want := map[string][2]any{
		"gpu-fra1-01":     {"ok", nil},
		"gpu-fra1-01-vm1": {"ok", nil},
		"gpu-fra1-02":     {"degraded", "root disk 94% full"},
		"gpu-fra1-03":     {"offline", "monitoring reports the node down (status standby)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("health (-want +got)\n%s", diff)
	}
	totals := d.call(http.MethodGet, "/ai/nodes?limit=1", nil)["gpu_classes"]
	wantTotals := []any{
		map[string]any{"gpu_class": "H100", "nodes": 2.0, "gpus": 8.0, "gpus_unknown_nodes": 0.0,
			"vram_total_bytes": 640e9, "vram_used_bytes": 63.3e9, "vram_free_bytes": 576.7e9, "vram_unknown_nodes": 0.0},
		map[string]any{"gpu_class": "L40S", "nodes": 2.0, "gpus": 4.0, "gpus_unknown_nodes": 1.0,
			"vram_total_bytes": 192e9, "vram_used_bytes": 0.0, "vram_free_bytes": 192e9, "vram_unknown_nodes": 1.0},
	}
	if diff := cmp.Diff(wantTotals, totals); diff != "" {
		t.Fatalf("gpu_classes (-want +got)\n%s", diff)
	}
}

// TestPortalNodeKey_DemoInstall_TheDemoAgentTakesTheRotatedKey: on a demo
// installation `portal node-key` (another process, the same --data-dir)
// writes the new key into the node's demo agent's key file, as an operator
// would into a real agent's: the agent takes it within a second and
// refuses the old one, with no restart. (Before, the demo agents held their
// start's key, and every copy onto a rotated node failed "node key
// refused" until serve restarted.)
func TestPortalNodeKey_DemoInstall_TheDemoAgentTakesTheRotatedKey(t *testing.T) {
	const host = "gpu-fra1-02"
	dsn, dir := pgtest.DSN(t), t.TempDir()
	startDemoWith(t, Options{DatabaseURL: dsn, DataDir: dir})
	old, err := os.ReadFile(demoKeyFile(demoFleetDir(dir), host))
	if err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, dsn: dsn}
	rotated := c.ok("--data-dir", dir, "portal", "node-key", host, "--as", demoAdmin)
	if rotated["rotated"] != true || rotated["demo_agent_key_file"] != demoKeyFile(demoFleetDir(dir), host) {
		t.Fatalf("portal node-key on the demo: %v", rotated)
	}
	var agentURL string
	c.query("SELECT agent_url FROM ai_nodes WHERE hostname = '"+host+"'", &agentURL)
	status := func(key string) int {
		req, _ := http.NewRequest("GET", agentURL+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	testkit.Eventually(t, 5*time.Second, "the demo agent takes the rotated key", func() bool {
		return status(rotated["node_key"].(string)) == http.StatusOK
	})
	if got := status(strings.TrimSpace(string(old))); got != http.StatusUnauthorized {
		t.Fatalf("the demo agent answers the old key %d, want 401", got)
	}
}

// A rotated node key is shown once: when the demo agent's key file cannot
// be written, the key is still printed (so it is not lost), without
// demo_agent_key_file, and the command fails naming the file.
func TestPortalNodeKey_DemoKeyFileUnwritable_KeyStillPrinted(t *testing.T) {
	const host = "gpu-fra1-02"
	dsn, dir := pgtest.DSN(t), t.TempDir()
	startDemoWith(t, Options{DatabaseURL: dsn, DataDir: dir})
	file := demoKeyFile(demoFleetDir(dir), host)
	// a directory (not empty) where the key file was: the write cannot replace it
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(file, "taken"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, dsn: dsn}
	out, err := c.run("--data-dir", dir, "portal", "node-key", host, "--as", demoAdmin)
	if err == nil || !strings.Contains(err.Error(), "demo agent's key file") {
		t.Fatalf("error = %v, want the key file's failure", err)
	}
	key, _ := out["node_key"].(string)
	if key == "" || out["rotated"] != true {
		t.Fatalf("output = %v, want the rotated key printed", out)
	}
	if _, ok := out["demo_agent_key_file"]; ok {
		t.Fatalf("output names the key file it could not write: %v", out)
	}
}

// Two writers of one demo agent's key file (serve --demo starting while
// portal node-key rotates, or two rotations) never meet in a shared
// temporary file: every write succeeds, the file holds one whole key, and
// no temporary file is left behind.
func TestWriteDemoKey_ConcurrentWritersLeaveOneWholeKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "node.key")
	var wg sync.WaitGroup
	errs := make(chan error, 8*50)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				errs <- writeDemoKey(file, fmt.Sprintf("key-%d-%03d", w, i))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent write failed: %v", err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^key-[0-7]-[0-9]{3}\n$`).Match(got) {
		t.Fatalf("key file holds %q, want one whole key", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d entries, want the key file alone", len(entries))
	}
}

// TestDemoFleet_ANodeOutsideTheDemoRoster_KeepsItsOwnAgent: a node an
// operator enrolled on a demo installation with an agent of their own (the
// README's "Enrolling a node", tried on the demo) is not one of the demo
// world's nodes: setting the demo fleet up again (as every restart of
// serve --demo does) leaves its agent_url as it is and starts no demo agent
// for it. (Before, every roster node got a demo agent: the node's agent_url
// was rewritten to an in-process agent with an empty cache, and the cache
// on the real node turned missing.)
func TestDemoFleet_ANodeOutsideTheDemoRoster_KeepsItsOwnAgent(t *testing.T) {
	const host, own = "gpu-own-01", "http://127.0.0.1:9441"
	dir := t.TempDir()
	m := startDemoWith(t, Options{DatabaseURL: pgtest.DSN(t), DataDir: dir}).m
	roster, err := resources.ParseInventory("demo_inventory.yaml", demoInventory)
	if err != nil {
		t.Fatal(err)
	}
	url := own
	roster.Nodes = append(roster.Nodes, resources.InventoryNode{Hostname: host, AgentURL: &url})
	if _, err := m.store.ImportInventory(t.Context(), resources.Actor{Label: demoAdmin}, roster); err != nil {
		t.Fatal(err)
	}
	if err := m.startDemoFleet(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := m.db.NewRaw("SELECT agent_url FROM ai_nodes WHERE hostname = ?", host).Scan(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if got != own {
		t.Errorf("agent_url of %s after the demo fleet's set-up: %q, want its own %q", host, got, own)
	}
	if _, err := os.Stat(filepath.Join(demoFleetDir(dir), host)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo fleet made a directory for %s (stat: %v)", host, err)
	}
}

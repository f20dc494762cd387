package api_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// failedCopy starts a copy onto host and waits for it to fail with code;
// no cache is left and the model is where it was.
func failedCopy(t *testing.T, e *apitest.Env, tok, host, model, code string) map[string]any {
	t.Helper()
	op := apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, host, model)["id"].(string), "failed")
	if er, _ := op["error"].(map[string]any); er["code"] != code || er["detail"] == "" {
		t.Fatalf("error %v, want %s", op["error"], code)
	}
	if n := count(t, e, "SELECT count(*) FROM node_caches"); n != 0 {
		t.Fatalf("a failed copy left %d cache rows", n)
	}
	if ready, loc := modelPlacement(t, e, model); ready || loc == nil || *loc != "nas" {
		t.Fatalf("model after a failed copy: offline_ready %v location %v", ready, loc)
	}
	return op
}

// published lists the files under the agent's cache root outside its own
// bookkeeping (.partial, .trash).
func published(t *testing.T, a *apitest.Agent) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(a.CacheRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a.CacheRoot, p)
		if d.IsDir() && strings.HasPrefix(rel, ".") && rel != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNodeCaches_Copy_CorruptCentralFile_FailedChecksumMismatchNothingReady(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	shard := filepath.Join(e.StoreRoot, "models/org/model/model-00002-of-00002.safetensors")
	b, _ := os.ReadFile(shard)
	b[len(b)/2] ^= 0xff // same size, other bytes: only the digest can tell
	if err := os.WriteFile(shard, b, 0o644); err != nil {
		t.Fatal(err)
	}
	op := failedCopy(t, e, tok, "gpu-01", model, resources.CodeChecksumMismatch)
	if d := op["error"].(map[string]any)["detail"].(string); !strings.Contains(d, "model-00002-of-00002.safetensors") {
		t.Fatalf("the detail does not name the file: %s", d)
	}
	if files := published(t, agents["gpu-01"]); len(files) != 0 {
		t.Fatalf("published on the node: %v", files)
	}
	if ev, _ := auditItems(t, e, tok, "?action=node_cache.copy_failed"); len(ev) != 1 || ev[0]["actor"] != "system" {
		t.Fatalf("events: %v", ev)
	}
}

func TestNodeCaches_Copy_CapSmallerThanTheModel_FailedInsufficientDiskNoByteWritten(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{MaxCacheBytes: 100 << 10})
	model := cacheModel(t, e, "org/model", true)
	op := failedCopy(t, e, tok, "gpu-02", model, resources.CodeInsufficientDisk)
	d := op["error"].(map[string]any)["detail"].(string)
	if !strings.Contains(d, fmt.Sprint(modelBytes("org/model"))) {
		t.Fatalf("the detail does not give the bytes needed (%d): %s", modelBytes("org/model"), d)
	}
	// what limits the copy (the agent's cap, not the disk) and the way out
	for _, says := range []string{"--max-cache-bytes cap of 102400", "DELETE /node-caches/gpu-02/"} {
		if !strings.Contains(d, says) {
			t.Fatalf("the detail does not say %q: %s", says, d)
		}
	}
	entries, err := os.ReadDir(agents["gpu-02"].CacheRoot)
	if err != nil || len(entries) != 0 {
		t.Fatalf("the cache root is not untouched: %v %v", entries, err)
	}
}

func TestNodeCaches_Copy_AgentDown_RetriedThenFailedNodeAgentUnreachable(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	agents["gpu-01"].HTTP.Close()
	op := failedCopy(t, e, tok, "gpu-01", model, resources.CodeNodeAgentUnreachable)
	if tries := count(t, e, "SELECT attempt FROM river_job WHERE kind = 'node_cache_copy'"); tries != 3 {
		t.Fatalf("the job ran %d times, want 3 (the policy's attempts)", tries)
	}
	if d := op["error"].(map[string]any)["detail"].(string); strings.Contains(d, agents["gpu-01"].Key) {
		t.Fatal("the node key is in the operation's error")
	}
}

func TestNodeCaches_Copy_KeyRotatedAwayFromTheAgent_FailedNodeAgentUnreachable(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	if _, err := e.Portal.MintNodeKey(context.Background(), resources.Actor{Label: apitest.AdminEmail}, "gpu-02"); err != nil {
		t.Fatal(err) // the server now sends the new key; the agent still holds the old one
	}
	op := failedCopy(t, e, tok, "gpu-02", model, resources.CodeNodeAgentUnreachable)
	if d := op["error"].(map[string]any)["detail"].(string); !strings.Contains(d, "key") {
		t.Fatalf("the detail does not say the key was refused: %s", d)
	}
}

func TestNodeCaches_Copy_CentralPathLeavingTheStore_FailedCentralCopyInvalid(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	aiNodeSQL(t, e, "UPDATE ai_models SET nas_path = '/models/../../etc' WHERE id = ?", parseInt(t, model))
	failedCopy(t, e, tok, "gpu-01", model, resources.CodeCentralCopyInvalid)
}

func TestNodeCaches_Copy_ThrottledAgent_ProgressInBytesWhileRunning(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{MaxBytesPerSecond: 64 << 10})
	model := cacheModel(t, e, "org/model", true)
	op := copyToNode(t, e, tok, "gpu-01", model)
	total := float64(modelBytes("org/model"))
	var seen map[string]any
	testkit.Eventually(t, 0, "a running copy reports its bytes", func() bool {
		seen = e.Do("GET", "/api/v1/operations/"+op["id"].(string), tok, nil).JSON(t)
		p, _ := seen["progress"].(map[string]any)
		return seen["status"] == "running" && p != nil && p["bytes_done"].(float64) > 0 &&
			p["bytes_done"].(float64) < total && p["bytes_total"] == total
	})
	item := e.Do("GET", "/api/v1/node-caches?hostname=gpu-01", tok, nil).JSON(t)["items"].([]any)[0].(map[string]any)
	if item["status"] != "copying" || item["operation_id"] != op["id"] {
		t.Fatalf("the copying cache does not name its operation: %v", item)
	}
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	assertCopied(t, agents["gpu-01"], "org/model")
	item = e.Do("GET", "/api/v1/node-caches?hostname=gpu-01", tok, nil).JSON(t)["items"].([]any)[0].(map[string]any)
	if item["status"] != "ready" || item["operation_id"] != nil {
		t.Fatalf("a ready cache names an operation: %v", item)
	}
}

func TestNodeCaches_Reconcile_DeletedByHandBecomesMissingThenCopiedAgain(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	if err := os.RemoveAll(filepath.Join(agents["gpu-01"].CacheRoot, "org/model")); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 0, "the cache deleted by hand turns missing", func() bool {
		items := e.Do("GET", "/api/v1/node-caches?hostname=gpu-01", tok, nil).JSON(t)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["status"] == "missing"
	})
	if ready, loc := modelPlacement(t, e, model); ready || *loc != "nas" {
		t.Fatalf("model with its only cache missing: %v %v", ready, *loc)
	}
	ev, _ := auditItems(t, e, tok, "?action=node_cache.missing")
	if len(ev) != 1 || ev[0]["actor"] != "system" {
		t.Fatalf("events: %v", ev)
	}
	if reason, _ := ev[0]["after_state"].(map[string]any)["reason"].(string); !strings.Contains(reason,
		"no longer reports") {
		t.Fatalf("the event does not say why: %v", ev[0]["after_state"])
	}
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	assertCopied(t, agents["gpu-01"], "org/model")
	if ready, loc := modelPlacement(t, e, model); !ready || *loc != "both" {
		t.Fatalf("model copied again: %v %v", ready, *loc)
	}
}

func TestNodeCaches_Reconcile_VerifiedCacheOnDiskAdopted(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	a := agents["gpu-02"]
	ep := resources.AgentEndpoint{Hostname: "gpu-02", URL: a.HTTP.URL, Key: a.Key}
	c := nodeagent.NewClient(nil)
	if _, err := c.Copy(context.Background(), ep, "org/model", "models/org/model"); err != nil {
		t.Fatal(err) // copied behind the database's back, as an operator's script might
	}
	testkit.Eventually(t, 0, "the cache on disk is adopted", func() bool {
		items := e.Do("GET", "/api/v1/node-caches?hostname=gpu-02", tok, nil).JSON(t)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["status"] == "ready"
	})
	if ready, loc := modelPlacement(t, e, model); !ready || *loc != "both" {
		t.Fatalf("model with an adopted cache: %v %v", ready, *loc)
	}
	if ev, _ := auditItems(t, e, tok, "?action=node_cache.adopted"); len(ev) != 1 || ev[0]["entity_id"] != "gpu-02/"+model {
		t.Fatalf("events: %v", ev)
	}
}

func TestAINodes_CacheFileSystemBytesFromTheAgent_NullWithoutOne(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	nodes := nodeItems(t, e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t))
	for h, a := range agents {
		n := nodes[h]
		total, free := n["cache_fs_total_bytes"].(float64), n["cache_fs_free_bytes"].(float64)
		if n["agent_url"] != a.HTTP.URL || total <= 0 || free <= 0 || free > total {
			t.Fatalf("%s: url %v total %v free %v", h, n["agent_url"], n["cache_fs_total_bytes"], n["cache_fs_free_bytes"])
		}
	}
	vm := nodes["gpu-01-vm1"]
	if vm["agent_url"] != nil || vm["cache_fs_total_bytes"] != nil || vm["cache_fs_free_bytes"] != nil {
		t.Fatalf("a node without an agent: %v", vm)
	}
	agents["gpu-02"].HTTP.Close()
	testkit.Eventually(t, 0, "an agent that stopped answering reads as null", func() bool {
		n := e.Do("GET", "/api/v1/ai/nodes/gpu-02", tok, nil).JSON(t)
		return n["cache_fs_free_bytes"] == nil && n["agent_url"] != nil
	})
}

// TestNodeCaches_Copy_WorkerStoppedWhileWatching_StopsCleanlyAnotherWorkerFinishes:
// stopping the worker while a job watches a copy (a minute at a time) does
// not wait for the watch: the job is cancelled after the soft stop and
// Stop returns cleanly, the operation stays running (the copy goes on on
// the node), and the next worker finishes it without copying a byte twice.
func TestNodeCaches_Copy_WorkerStoppedWhileWatching_StopsCleanlyAnotherWorkerFinishes(t *testing.T) {
	policy := bunstore.AgentPolicy{Poll: 20 * time.Millisecond, Backoff: 10 * time.Millisecond, Attempts: 3,
		Watch: time.Minute}
	e, tok, agents := agentEnv(t, apitest.Options{AgentPolicy: policy}, nodeagent.Config{MaxBytesPerSecond: 16 << 10})
	model := cacheModel(t, e, "org/model", true)
	op := copyToNode(t, e, tok, "gpu-01", model)
	opPath := "/api/v1/operations/" + op["id"].(string)
	testkit.Eventually(t, 0, "the copy runs", func() bool {
		p, _ := e.Do("GET", opPath, tok, nil).JSON(t)["progress"].(map[string]any)
		return p != nil && p["bytes_done"].(float64) > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Worker.Stop(ctx); err != nil {
		t.Fatalf("stopping the worker while a copy is watched: %v", err)
	}
	if status := e.Do("GET", opPath, tok, nil).JSON(t)["status"]; status != "running" {
		t.Fatalf("after the stop the operation is %v, want running", status)
	}
	e.StartWorker()
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	assertCopied(t, agents["gpu-01"], "org/model")
	if read := agents["gpu-01"].BytesRead(); read != modelBytes("org/model") {
		t.Fatalf("the agent read %d bytes for a %d-byte model", read, modelBytes("org/model"))
	}
}

// TestAINodes_CacheCapFromTheAgent_FreeBytesUnderIt: a node whose agent
// caps its cache (--max-cache-bytes) shows the cap, what the cache holds
// and what copies may still use (the cap less the cache, not the file
// system's free bytes), so an operator sees before a copy that a model
// will not fit; without a cap, the free bytes are the file system's.
func TestAINodes_CacheCapFromTheAgent_FreeBytesUnderIt(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{MaxCacheBytes: 1 << 20})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	a := agents["gpu-01"]
	rep, err := nodeagent.NewClient(nil).Report(context.Background(),
		resources.AgentEndpoint{Hostname: "gpu-01", URL: a.HTTP.URL, Key: a.Key})
	if err != nil || rep.UsedBytes < modelBytes("org/model") {
		t.Fatalf("the agent's report: %+v %v", rep, err)
	}
	used := float64(rep.UsedBytes)
	n := e.Do("GET", "/api/v1/ai/nodes/gpu-01", tok, nil).JSON(t)
	got := map[string]any{"max": n["cache_max_bytes"], "used": n["cache_used_bytes"], "free": n["cache_free_bytes"]}
	want := map[string]any{"max": float64(1 << 20), "used": used, "free": float64(1<<20) - used}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("gpu-01's cache (-want +got):\n%s", d)
	}
	uncapped := e.StartAgent("gpu-02", nodeagent.Config{})
	n = e.Do("GET", "/api/v1/ai/nodes/gpu-02", tok, nil).JSON(t)
	if n["cache_max_bytes"] != nil || n["cache_used_bytes"] != 0.0 ||
		n["cache_free_bytes"] != n["cache_fs_free_bytes"] || uncapped == nil {
		t.Fatalf("an agent without a cap: %v", n)
	}
	vm := e.Do("GET", "/api/v1/ai/nodes/gpu-01-vm1", tok, nil).JSON(t)
	if vm["cache_max_bytes"] != nil || vm["cache_used_bytes"] != nil || vm["cache_free_bytes"] != nil {
		t.Fatalf("a node without an agent: %v", vm)
	}
}

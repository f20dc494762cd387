package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// Caches found on a node's disk (copied there by hand, left by an earlier
// agent) are adopted only once the agent has hashed every file against
// the central copy of the model the database names.

// placeByHand copies repo's cache from one node's cache root into another's
// under the name as, as an operator with cp -r would: its manifest names
// as, and source when given; edit (when given) changes the copy before it
// appears, at once, by rename.
func placeByHand(t *testing.T, from, to *apitest.Agent, repo, as, source string,
	edit func(dir string)) {
	t.Helper()
	staged := filepath.Join(t.TempDir(), "cache")
	if err := os.CopyFS(staged, os.DirFS(filepath.Join(from.CacheRoot, repo))); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(staged, nodeagent.CacheManifestName)
	var m map[string]any
	b, err := os.ReadFile(manifest)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	m["repo"] = as
	if source != "" {
		m["source"] = source
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(staged)
	}
	dest := filepath.Join(to.CacheRoot, as)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, dest); err != nil {
		t.Fatal(err)
	}
}

// waitAgentState waits until the node's agent reports repo's cache in
// state, failing if it ever reports it ready when state is not.
func waitAgentState(t *testing.T, a *apitest.Agent, repo, state string) resources.AgentCache {
	t.Helper()
	ep := resources.AgentEndpoint{URL: a.HTTP.URL, Key: a.Key}
	var c *resources.AgentCache
	testkit.Eventually(t, 30*time.Second, repo+" "+state+" on the node", func() bool {
		var err error
		if c, err = nodeagent.NewClient(nil).Cache(context.Background(), ep, repo); err != nil {
			t.Fatal(err)
		}
		if c != nil && c.State == resources.AgentCacheReady && state != resources.AgentCacheReady {
			t.Fatalf("the agent reports %s ready: %+v", repo, *c)
		}
		return c != nil && c.State == state
	})
	return *c
}

// nodeCacheStatus lists a node's caches: model id → status.
func nodeCacheStatus(t *testing.T, e *apitest.Env, tok, host string) map[string]any {
	t.Helper()
	out := map[string]any{}
	items := e.Do("GET", "/api/v1/node-caches?hostname="+host, tok, nil).JSON(t)["items"].([]any)
	for _, it := range items {
		c := it.(map[string]any)
		out[c["model_id"].(string)] = c["status"]
	}
	return out
}

func TestNodeCaches_Reconcile_FoundCachesAdoptedOnlyWhenVerifiedAgainstTheModelsCentralCopy(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	broken, intact := cacheModel(t, e, "org/broken", true), cacheModel(t, e, "org/intact", true)
	other := cacheModel(t, e, "org/other", true)
	planned, posing := cacheModel(t, e, "org/planned", false), cacheModel(t, e, "org/posing", false)
	for _, m := range []string{broken, intact} {
		apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", m)["id"].(string), "succeeded")
	}
	src, dst := agents["gpu-01"], agents["gpu-02"]
	// One byte changed, same size (audit C, finding 1).
	placeByHand(t, src, dst, "org/broken", "org/broken", "", func(dir string) {
		testkit.ChangeByte(t, filepath.Join(dir, "model-00002-of-00002.safetensors"))
	})
	// Weights given by hand to a planned model, which has no central copy
	// (finding 2); another model's verified weights under the name of a
	// planned model and of a model with a central copy of its own.
	placeByHand(t, src, dst, "org/intact", "org/planned", "models/org/planned", nil)
	placeByHand(t, src, dst, "org/intact", "org/posing", "", nil)
	placeByHand(t, src, dst, "org/intact", "org/other", "", nil)
	if c := waitAgentState(t, dst, "org/broken", resources.AgentCacheCorrupt); c.Error == nil ||
		!strings.Contains(c.Error.Detail, "model-00002-of-00002.safetensors") {
		t.Fatalf("corrupt without naming the file: %+v", c.Error)
	}
	waitAgentState(t, dst, "org/planned", resources.AgentCacheUnverifiable)
	waitAgentState(t, dst, "org/posing", resources.AgentCacheReady)
	waitAgentState(t, dst, "org/other", resources.AgentCacheReady)
	// A ready cache of the planned model recorded earlier is left as it is.
	if _, err := e.Store.DB().NewRaw("INSERT INTO node_caches (hostname, model_id, status, path, "+
		"size_gb) VALUES ('gpu-02', ?, 'ready', ?, 0.0002)", parseInt(t, planned),
		filepath.Join(dst.CacheRoot, "org/planned")).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Placed last, the intact copy is adopted: a reconcile ran after every
	// other verdict.
	placeByHand(t, src, dst, "org/intact", "org/intact", "", nil)
	testkit.Eventually(t, 30*time.Second, "the intact copy adopted", func() bool {
		return nodeCacheStatus(t, e, tok, "gpu-02")[intact] == "ready"
	})
	// The corrupt copy is recorded missing (audit brokendir): its bytes
	// show in the API, and a DELETE removes them.
	want := map[string]any{intact: "ready", planned: "ready", broken: "missing"}
	if got := nodeCacheStatus(t, e, tok, "gpu-02"); !equalMaps(got, want) {
		t.Fatalf("caches of gpu-02: %v, want %v", got, want)
	}
	ev, _ := auditItems(t, e, tok, "?action=node_cache.adopted")
	if len(ev) != 1 || ev[0]["entity_id"] != "gpu-02/"+intact {
		t.Fatalf("adopted: %v", ev)
	}
	if ready, loc := modelPlacement(t, e, posing); ready || loc != nil {
		t.Fatalf("the posing planned model: offline_ready %v location %v", ready, loc)
	}
	if ready, loc := modelPlacement(t, e, other); ready || loc == nil || *loc != "nas" {
		t.Fatalf("the model under another's weights: offline_ready %v location %v", ready, loc)
	}
}

func equalMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestNodeCaches_Reconcile_ReadyCacheChangedOnDisk_MissingUntilCopiedAgain(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	testkit.ChangeByte(t, filepath.Join(agents["gpu-01"].CacheRoot, "org/model/model-00001-of-00002.safetensors"))
	testkit.Eventually(t, 30*time.Second, "the changed cache turns missing", func() bool {
		return nodeCacheStatus(t, e, tok, "gpu-01")[model] == "missing"
	})
	if ready, loc := modelPlacement(t, e, model); ready || *loc != "nas" {
		t.Fatalf("model with its only cache corrupt: %v %v", ready, *loc)
	}
	ev, _ := auditItems(t, e, tok, "?action=node_cache.missing")
	if len(ev) != 1 || ev[0]["actor"] != "system" {
		t.Fatalf("events: %v", ev)
	}
	if reason, _ := ev[0]["after_state"].(map[string]any)["reason"].(string); !strings.Contains(reason,
		"model-00001-of-00002.safetensors") {
		t.Fatalf("the event does not say why: %v", ev[0]["after_state"])
	}
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	assertCopied(t, agents["gpu-01"], "org/model")
	if ready, loc := modelPlacement(t, e, model); !ready || *loc != "both" {
		t.Fatalf("model copied again: %v %v", ready, *loc)
	}
}

// TestNodeCaches_Reconcile_ReadyCacheReportedAtAnotherPath_PathFollows: an
// operator moves a node's cache to a bigger disk (agent stopped, the
// directory moved, the agent started with the new --cache-root). The
// agent reports the cache verifying, then ready, at its new directory; the
// reconcile gives the node cache that path, audited as system
// (node_cache.moved). Before, a cache never reported absent kept naming
// the old directory for good.
func TestNodeCaches_Reconcile_ReadyCacheReportedAtAnotherPath_PathFollows(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	old := agents["gpu-01"]
	old.HTTP.Close() // the agent stopped: the reconcile changes nothing meanwhile
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "org"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "org/model")
	if err := os.Rename(filepath.Join(old.CacheRoot, "org/model"), want); err != nil {
		t.Fatal(err)
	}
	cfg := nodeagent.Config{StoreRoot: e.StoreRoot, CacheRoot: root, Key: old.Key}
	moved, err := nodeagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(moved.Handler())
	t.Cleanup(func() { srv.Close(); _ = moved.Close() })
	e.SetAgentURL("gpu-01", srv.URL)
	testkit.Eventually(t, 30*time.Second, "the node cache names the new directory", func() bool {
		items := e.Do("GET", "/api/v1/node-caches?hostname=gpu-01", tok, nil).JSON(t)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["path"] == want
	})
	if s := nodeCacheStatus(t, e, tok, "gpu-01"); s[model] != "ready" {
		t.Fatalf("node caches after the move: %v", s)
	}
	ev, _ := auditItems(t, e, tok, "?action=node_cache.moved")
	if len(ev) != 1 || ev[0]["actor"] != "system" || ev[0]["entity_id"] != "gpu-01/"+model {
		t.Fatalf("events: %v", ev)
	}
	if ev, _ := auditItems(t, e, tok, "?action=node_cache.missing"); len(ev) != 0 {
		t.Fatalf("the moved cache was marked missing: %v", ev)
	}
}

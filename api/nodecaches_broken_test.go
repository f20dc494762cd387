package api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// A cache directory from which a shard was deleted by hand is reported
// corrupt by its agent, naming the shard; the reconcile records it
// missing with that reason, and a DELETE removes its bytes, whether the
// database had a row of it (it turns missing) or not (it is recorded
// missing, so an operator sees the bytes and can remove them).

const deletedShard = "model-00001-of-00002.safetensors"

// missingBecause waits until host's cache of model is missing and answers
// the reason of its node_cache.missing event, which must name the
// deleted shard.
func missingBecause(t *testing.T, e *apitest.Env, tok, host, model string) string {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "the broken cache is recorded missing", func() bool {
		return nodeCacheStatus(t, e, tok, host)[model] == "missing"
	})
	ev, _ := auditItems(t, e, tok, "?action=node_cache.missing&entity_id="+host+"/"+model)
	if len(ev) != 1 || ev[0]["actor"] != "system" {
		t.Fatalf("events: %v", ev)
	}
	reason, _ := ev[0]["after_state"].(map[string]any)["reason"].(string)
	if !strings.Contains(reason, deletedShard) || !strings.Contains(reason, "is missing") {
		t.Fatalf("the event does not name the deleted shard: %v", ev[0]["after_state"])
	}
	return reason
}

// removedFromNode DELETEs host's cache of model, waits for the removal and
// checks the row and the directory are gone.
func removedFromNode(t *testing.T, e *apitest.Env, tok string, a *apitest.Agent,
	host, model string) {
	t.Helper()
	apitest.PollOperation(t, e, tok, removeFromNode(t, e, tok, host, model)["id"].(string), "succeeded")
	if _, err := os.Stat(filepath.Join(a.CacheRoot, "org/model")); !os.IsNotExist(err) {
		t.Fatalf("the broken directory is still on the node: %v", err)
	}
	if _, ok := nodeCacheStatus(t, e, tok, host)[model]; ok {
		t.Fatal("the removed cache is still listed")
	}
}

func TestNodeCaches_Reconcile_ShardDeletedByHand_MissingNamingItThenRemoved(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	shard := filepath.Join(agents["gpu-01"].CacheRoot, "org/model", deletedShard)
	if err := os.Remove(shard); err != nil {
		t.Fatal(err)
	}
	missingBecause(t, e, tok, "gpu-01", model)
	if ready, loc := modelPlacement(t, e, model); ready || *loc != "nas" {
		t.Fatalf("model with its only cache broken: %v %v", ready, *loc)
	}
	removedFromNode(t, e, tok, agents["gpu-01"], "gpu-01", model)
}

// TestNodeCaches_Reconcile_BrokenDirectoryWithoutRow_RecordedMissingThenRemoved:
// a broken directory the database has no row of (a copy over it failed,
// which drops its row; or it was placed by hand) is recorded missing, so
// it shows in the API and a DELETE removes it; it was invisible and could
// not be removed through the API.
func TestNodeCaches_Reconcile_BrokenDirectoryWithoutRow_RecordedMissingThenRemoved(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{ReconcileInterval: 100e6}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	placeByHand(t, agents["gpu-01"], agents["gpu-02"], "org/model", "org/model", "", func(dir string) {
		if err := os.Remove(filepath.Join(dir, deletedShard)); err != nil {
			t.Fatal(err)
		}
	})
	missingBecause(t, e, tok, "gpu-02", model)
	if ready, loc := modelPlacement(t, e, model); !ready || *loc != "both" {
		t.Fatalf("model with a ready and a broken cache: %v %v", ready, *loc)
	}
	removedFromNode(t, e, tok, agents["gpu-02"], "gpu-02", model)
}

package api_test

import (
	"os"
	"path/filepath"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// TestNodeCaches_RemoveWhileCopying_StopsTheCopyAndRemovesItsBytes: a
// DELETE while the copy runs is the way to stop a copy started by mistake:
// the copy ends failed `copy_cancelled`, the removal (202) deletes what the
// copy wrote on the node (partial directory included) once the copy job
// has stopped driving the agent, nothing is left copying, and a later PUT
// copies from scratch.
func TestNodeCaches_RemoveWhileCopying_StopsTheCopyAndRemovesItsBytes(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{MaxBytesPerSecond: 32 << 10})
	model := cacheModel(t, e, "org/model", true)
	copyOp := copyToNode(t, e, tok, "gpu-01", model)["id"].(string)
	testkit.Eventually(t, 0, "the copy has moved bytes", func() bool {
		p, _ := e.Do("GET", "/api/v1/operations/"+copyOp, tok, nil).JSON(t)["progress"].(map[string]any)
		return p != nil && p["bytes_done"].(float64) > 0
	})
	r := e.Do("DELETE", "/api/v1/node-caches/gpu-01/"+model, tok, nil)
	if r.Status != 202 || r.JSON(t)["kind"] != resources.OpKindNodeCacheRemove {
		t.Fatalf("remove while copying: %d %s", r.Status, r.Body)
	}
	stopped := e.Do("GET", "/api/v1/operations/"+copyOp, tok, nil).JSON(t)
	if er, _ := stopped["error"].(map[string]any); stopped["status"] != "failed" ||
		er["code"] != resources.CodeCopyCancelled || er["detail"] == "" {
		t.Fatalf("the stopped copy: %v", stopped)
	}
	apitest.PollOperation(t, e, tok, r.JSON(t)["id"].(string), "succeeded")
	if jobs := count(t, e, "SELECT count(*) FROM river_job WHERE kind = 'node_cache_copy' "+
		"AND state NOT IN ('completed', 'cancelled', 'discarded')"); jobs != 0 {
		t.Fatalf("%d copy jobs still drive the agent after the removal", jobs)
	}
	if n := count(t, e, "SELECT count(*) FROM node_caches"); n != 0 {
		t.Fatalf("%d cache rows left", n)
	}
	a := agents["gpu-01"]
	for _, dir := range []string{"org/model", ".partial/org/model"} {
		if _, err := os.Stat(filepath.Join(a.CacheRoot, dir)); !os.IsNotExist(err) {
			t.Fatalf("%s on the node after the removal: %v", dir, err)
		}
	}
	if ev, _ := auditItems(t, e, tok, "?action=node_cache.remove"); len(ev) != 1 ||
		ev[0]["before_state"].(map[string]any)["status"] != "copying" {
		t.Fatalf("removal event: %v", ev)
	}
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	assertCopied(t, a, "org/model")
}

package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// cacheItem is the node's one cache as GET /node-caches lists it, without
// updated_at (which a status change moves).
func cacheItem(t *testing.T, e *apitest.Env, tok, host string) map[string]any {
	t.Helper()
	items := e.Do("GET", "/api/v1/node-caches?hostname="+host, tok, nil).JSON(t)["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("caches on %s: %v", host, items)
	}
	item := items[0].(map[string]any)
	delete(item, "updated_at")
	return item
}

// removeFromNode DELETEs a node cache and checks the 202 operation.
func removeFromNode(t *testing.T, e *apitest.Env, tok, host, model string) map[string]any {
	t.Helper()
	r := e.Do("DELETE", "/api/v1/node-caches/"+host+"/"+model, tok, nil)
	op := r.JSON(t)
	if r.Status != 202 || op["kind"] != "node_cache_remove" {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	return op
}

// failedRemoval removes the node's cache of model and waits for the removal
// to fail node_agent_unreachable after the policy's 3 tries.
func failedRemoval(t *testing.T, e *apitest.Env, tok, host, model string) {
	t.Helper()
	op := apitest.PollOperation(t, e, tok, removeFromNode(t, e, tok, host, model)["id"].(string), "failed")
	er, _ := op["error"].(map[string]any)
	if er["code"] != resources.CodeNodeAgentUnreachable || !strings.Contains(er["detail"].(string), "3 tries") {
		t.Fatalf("error %v, want %s after 3 tries", op["error"], resources.CodeNodeAgentUnreachable)
	}
	if res, _ := op["result"].(map[string]any); res["status"] != "not_removed" {
		t.Fatalf("result %v, want status not_removed", op["result"])
	}
	if tries := count(t, e, "SELECT attempt FROM river_job WHERE kind = 'node_cache_remove'"); tries != 3 {
		t.Fatalf("the job ran %d times, want 3 (the policy's attempts)", tries)
	}
}

// TestNodeCaches_Remove_AgentUnreachable_FailsNodeAgentUnreachableCacheKept:
// a removal whose node agent does not answer is tried the policy's
// attempts, then its operation fails node_agent_unreachable; the cache gets
// back the status it had before (ready, or missing), the model keeps its
// placement and the weights on the node are untouched.
func TestNodeCaches_Remove_AgentUnreachable_FailsNodeAgentUnreachableCacheKept(t *testing.T) {
	for _, from := range []string{resources.NodeCacheReady, resources.NodeCacheMissing} {
		t.Run(from, func(t *testing.T) {
			e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
			model := cacheModel(t, e, "org/model", true)
			apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
			aiNodeSQL(t, e, "UPDATE node_caches SET status = ? WHERE hostname = 'gpu-01'", from)
			before := cacheItem(t, e, tok, "gpu-01")
			readyBefore, locBefore := modelPlacement(t, e, model)
			if before["status"] != from {
				t.Fatalf("the cache before the removal: %v", before)
			}
			agents["gpu-01"].HTTP.Close()
			failedRemoval(t, e, tok, "gpu-01", model)
			if d := cmp.Diff(before, cacheItem(t, e, tok, "gpu-01")); d != "" {
				t.Fatalf("the cache after a failed removal (-before +after):\n%s", d)
			}
			if ready, loc := modelPlacement(t, e, model); ready != readyBefore || *loc != *locBefore {
				t.Fatalf("placement %v %v, before %v %v", ready, *loc, readyBefore, *locBefore)
			}
			assertCopied(t, agents["gpu-01"], "org/model")
			if ev, _ := auditItems(t, e, tok, "?action=node_cache.remove_failed"); len(ev) != 1 {
				t.Fatalf("events: %v", ev)
			}
		})
	}
}

// attemptTimes are when a job of kind began each of its attempts, in order:
// River's errors[].at of the attempts that failed and attempted_at of the
// last one.
func attemptTimes(t *testing.T, e *apitest.Env, kind string) []time.Time {
	t.Helper()
	var rows []struct {
		N  int       `bun:"n"`
		At time.Time `bun:"at"`
	}
	q := "SELECT (x->>'attempt')::int AS n, (x->>'at')::timestamptz AS at FROM river_job, unnest(errors) AS x " +
		"WHERE kind = ? UNION ALL SELECT attempt, attempted_at FROM river_job WHERE kind = ? ORDER BY n"
	if err := e.Store.DB().NewRaw(q, kind, kind).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := make([]time.Time, len(rows))
	for i, r := range rows {
		if r.N != i+1 {
			t.Fatalf("attempts %v: not one row per attempt", rows)
		}
		out[i] = r.At
	}
	return out
}

// TestNodeCaches_Copy_AgentUnreachable_RetriesSpacedByTheDoublingBackoff:
// a copy whose node agent does not answer is tried again no sooner than the
// policy's Backoff after the first try, and twice that after the second.
// The Backoff is above River's 250 ms between writes of finished attempts
// (which spaces even immediate retries), so that an immediate retry fails.
func TestNodeCaches_Copy_AgentUnreachable_RetriesSpacedByTheDoublingBackoff(t *testing.T) {
	const backoff = 400 * time.Millisecond
	policy := bunstore.AgentPolicy{Poll: 20 * time.Millisecond, Backoff: backoff, Attempts: 3}
	e, tok, agents := agentEnv(t, apitest.Options{AgentPolicy: policy}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	agents["gpu-01"].HTTP.Close()
	failedCopy(t, e, tok, "gpu-01", model, resources.CodeNodeAgentUnreachable)
	at := attemptTimes(t, e, "node_cache_copy")
	if len(at) != 3 {
		t.Fatalf("attempts began at %v, want 3", at)
	}
	for i, want := range []time.Duration{backoff, 2 * backoff} {
		if gap := at[i+1].Sub(at[i]); gap < want {
			t.Errorf("attempt %d began %v after attempt %d, want at least %v", i+2, gap, i+1, want)
		}
	}
}

// TestNodeCaches_CopyWhileRemoving_DetailNamesTheRemovalsOperation: a PUT
// refused node_cache_busy by a running removal names that removal's
// operation, so the operator knows what to poll before copying again.
func TestNodeCaches_CopyWhileRemoving_DetailNamesTheRemovalsOperation(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-02", model)["id"].(string), "succeeded")
	agents["gpu-02"].HTTP.Close() // the removal retries: it stays running
	removal := removeFromNode(t, e, tok, "gpu-02", model)["id"].(string)
	busy := assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-02/"+model, tok, nil), 409, "node_cache_busy")
	if d, _ := busy["detail"].(string); !strings.Contains(d, "GET /api/v1/operations/"+removal) {
		t.Fatalf("the detail does not name the removal's operation %s: %v", removal, busy["detail"])
	}
}

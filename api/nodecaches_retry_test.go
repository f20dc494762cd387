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
	"platformapi/resources/testkit"
)

// retryPolicy retries an agent from 300 ms on, doubling, long enough for a
// test to see the operation waiting and to bring the agent back.
var retryPolicy = bunstore.AgentPolicy{Poll: 20 * time.Millisecond, Backoff: 300 * time.Millisecond,
	Attempts: 20}

// retrying polls the operation until it names a retry and returns the
// operation.
func retrying(t *testing.T, e *apitest.Env, tok, id string) map[string]any {
	t.Helper()
	var op map[string]any
	testkit.Eventually(t, 0, "operation "+id+" says it is retrying", func() bool {
		op = e.Do("GET", "/api/v1/operations/"+id, tok, nil).JSON(t)
		return op["status"] == "running" && op["retry"] != nil
	})
	return op
}

// checkRetry checks the retry member of a running operation: the tries so
// far, the policy's, when the next is due (after the operation's
// updated_at, within the policy's backoff) and the reason's words; the
// rest of the member is compared whole.
func checkRetry(t *testing.T, op map[string]any, code string, says ...string) {
	t.Helper()
	r, _ := op["retry"].(map[string]any)
	attempts, _ := r["attempts"].(float64)
	if attempts < 1 || attempts >= float64(retryPolicy.Attempts) {
		t.Fatalf("retry.attempts %v, want from 1 to %d", r["attempts"], retryPolicy.Attempts-1)
	}
	next, err := time.Parse(time.RFC3339Nano, r["next_attempt_at"].(string))
	updated, _ := time.Parse(time.RFC3339Nano, op["updated_at"].(string))
	if err != nil || next.Before(updated) || next.After(updated.Add(time.Minute)) {
		t.Fatalf("retry.next_attempt_at %v for an operation updated at %v", r["next_attempt_at"],
			op["updated_at"])
	}
	for _, s := range says {
		if !strings.Contains(r["reason"].(string), s) {
			t.Fatalf("retry.reason does not say %q: %s", s, r["reason"])
		}
	}
	got := map[string]any{"attempts": r["attempts"], "max_attempts": r["max_attempts"], "code": r["code"]}
	want := map[string]any{"attempts": attempts, "max_attempts": float64(retryPolicy.Attempts),
		"code": code}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("retry (-want +got):\n%s", d)
	}
}

// noKeyIn fails when a node key (without its prefix) is in text.
func noKeyIn(t *testing.T, where, text string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if strings.Contains(text, strings.TrimPrefix(k, resources.NodeKeyPrefix)) {
			t.Fatalf("a node key is in %s", where)
		}
	}
}

// TestNodeCaches_Copy_AgentStopped_OperationSaysRetryingUntilItAnswersAgain:
// while the node's agent does not answer, the copy's operation is running
// with retry {attempts, max_attempts, next_attempt_at, code, reason}
// naming the node and the agent's address (updated_at moves with each
// try); GET /operations lists the same; once the agent answers again the
// retry is null while the copy goes on, and the copy succeeds.
func TestNodeCaches_Copy_AgentStopped_OperationSaysRetryingUntilItAnswersAgain(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{AgentPolicy: retryPolicy},
		nodeagent.Config{MaxBytesPerSecond: 64 << 10})
	model := cacheModel(t, e, "org/model", true)
	a := agents["gpu-01"]
	a.HTTP.Close()
	started := copyToNode(t, e, tok, "gpu-01", model)
	if r, ok := started["retry"]; !ok || r != nil {
		t.Fatalf("the 202 answer's retry: %v (present %v), want null", r, ok)
	}
	id := started["id"].(string)
	op := retrying(t, e, tok, id)
	checkRetry(t, op, resources.CodeNodeAgentUnreachable, "gpu-01", a.HTTP.URL, "did not answer")
	if op["updated_at"] == started["updated_at"] {
		t.Fatalf("updated_at did not move with the retry: %v", op["updated_at"])
	}
	listed := e.Do("GET", "/api/v1/operations?target_id=gpu-01/"+model, tok, nil).JSON(t)["items"].([]any)
	if r := listed[0].(map[string]any)["retry"]; r == nil {
		t.Fatalf("GET /operations does not list the retry: %v", listed[0])
	}
	a.Resume()
	testkit.Eventually(t, 0, "the retry clears once the agent answers, the copy going on", func() bool {
		op = e.Do("GET", "/api/v1/operations/"+id, tok, nil).JSON(t)
		p, _ := op["progress"].(map[string]any)
		return op["status"] == "running" && op["retry"] == nil && p != nil && p["bytes_done"].(float64) > 0
	})
	done := apitest.PollOperation(t, e, tok, id, "succeeded")
	if r, ok := done["retry"]; !ok || r != nil {
		t.Fatalf("the succeeded operation's retry: %v (present %v), want null", r, ok)
	}
	assertCopied(t, a, "org/model")
}

// TestNodeCaches_Copy_NodeKeyRefused_RetrySaysReEnrolThenGoesOnWithTheNewKey:
// after `portal node-key` rotated gpu-02's key, its agent (still holding
// the former key) refuses the server (401): the operation's retry names
// the refused key and the command that re-enrols the node, never a key;
// once the new key is in the agent's key file the copy goes on and
// succeeds, within the retries (which is why a refused key is retried).
func TestNodeCaches_Copy_NodeKeyRefused_RetrySaysReEnrolThenGoesOnWithTheNewKey(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{AgentPolicy: retryPolicy}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	a, former := agents["gpu-02"], agents["gpu-02"].Key
	admin := resources.Actor{Label: apitest.AdminEmail}
	rotated, err := e.Portal.MintNodeKey(context.Background(), admin, "gpu-02") // as `portal node-key`
	if err != nil {
		t.Fatal(err)
	}
	id := copyToNode(t, e, tok, "gpu-02", model)["id"].(string)
	op := retrying(t, e, tok, id)
	checkRetry(t, op, resources.CodeNodeKeyRefused, a.HTTP.URL, "refused the node key",
		"platformapi portal node-key gpu-02 --as")
	body := string(e.Do("GET", "/api/v1/operations/"+id, tok, nil).Body)
	noKeyIn(t, "the operation", body, former, rotated.Key)
	a.SetKey(rotated.Key)
	done := apitest.PollOperation(t, e, tok, id, "succeeded")
	if done["retry"] != nil {
		t.Fatalf("the succeeded operation's retry: %v", done["retry"])
	}
	assertCopied(t, a, "org/model")
	noKeyIn(t, "the server log", e.LogText(), former, rotated.Key)
}

// TestNodeCaches_Remove_AgentStopped_RetryWhileTryingNullOnceFailed: a
// removal whose agent does not answer says so in retry while it is
// retried, and once the tries are spent it fails node_agent_unreachable
// (as before) with retry null.
func TestNodeCaches_Remove_AgentStopped_RetryWhileTryingNullOnceFailed(t *testing.T) {
	policy := retryPolicy
	policy.Attempts = 4
	e, tok, agents := agentEnv(t, apitest.Options{AgentPolicy: policy}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	agents["gpu-01"].HTTP.Close()
	id := removeFromNode(t, e, tok, "gpu-01", model)["id"].(string)
	r, _ := retrying(t, e, tok, id)["retry"].(map[string]any)
	if r["code"] != resources.CodeNodeAgentUnreachable || r["max_attempts"] != 4.0 ||
		!strings.Contains(r["reason"].(string), agents["gpu-01"].HTTP.URL) {
		t.Fatalf("the removal's retry: %v", r)
	}
	op := apitest.PollOperation(t, e, tok, id, "failed")
	if er, _ := op["error"].(map[string]any); er["code"] != resources.CodeNodeAgentUnreachable {
		t.Fatalf("error %v", op["error"])
	}
	if r, ok := op["retry"]; !ok || r != nil {
		t.Fatalf("the failed removal's retry: %v (present %v), want null", r, ok)
	}
}

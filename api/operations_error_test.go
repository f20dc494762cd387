package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// operationProblem is the error member of failed operation opID: the
// problem document of code (RFC 9457, the form of the API's problems), the
// title fixed for the code, the operation's own path as instance and no
// status (no HTTP answer carried it).
func operationProblem(code, title, detail, opID string) map[string]any {
	return map[string]any{"type": "urn:svc:api:problem:" + code, "title": title, "code": code,
		"detail": detail, "instance": "/api/v1/operations/" + opID}
}

// failedOperationErrors is the error member of failed operation opID in
// every read that shows it: GET /operations/{id} and GET /operations.
func failedOperationErrors(t *testing.T, e *apitest.Env, tok, opID string) map[string]any {
	t.Helper()
	done := apitest.PollOperation(t, e, tok, opID, "failed")
	views := map[string]any{"GET /operations/{id}": done["error"]}
	r := e.Do("GET", "/api/v1/operations?status=failed", tok, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	for _, it := range r.JSON(t)["items"].([]any) {
		if op := it.(map[string]any); op["id"] == opID {
			views["GET /operations"] = op["error"]
		}
	}
	return views
}

// assertErrorViews compares every view of an operation's error with want.
func assertErrorViews(t *testing.T, want map[string]any, views map[string]any) {
	t.Helper()
	if len(views) < 2 {
		t.Fatalf("views: %v", views)
	}
	for where, got := range views {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: error member (-want +got)\n%s", where, diff)
		}
	}
}

// TestOperations_Failed_ErrorIsAProblemDocument: a rejected prod promotion
// fails with a code only operations carry (no HTTP status in the
// catalogue): its error is a problem document titled with the code in
// words, the same at GET /operations/{id}, in GET /operations, at GET
// /release-operations/{id} and in the project's release operations.
func TestOperations_Failed_ErrorIsAProblemDocument(t *testing.T) {
	e, tok := projectEnv(t)
	pid, id := prodAwaitingApproval(t, e, tok)
	reason, actor := "not during the sale", resources.Actor{Label: otherAdmin}
	if _, err := e.Store.RejectRelease(context.Background(), actor, id, reason); err != nil {
		t.Fatal(err)
	}
	opID := resources.ReleaseOperationRef(id)
	views := failedOperationErrors(t, e, tok, opID)
	views["GET /release-operations/{id}"] = releaseOp(t, e, tok, id)["error"]
	if items, _ := releaseItems(t, e, tok, pid, "?status=failed"); len(items) == 1 {
		views["GET /projects/{id}/release-operations"] = items[0]["error"]
	}
	want := operationProblem(resources.CodeReleaseRejected, "Release rejected", reason, opID)
	assertErrorViews(t, want, views)
}

// TestOperations_FailedWithAProblemCode_TitleIsItsReasonPhrase: a
// promotion whose project was retired before its dispatch fails with
// project_retired, a code the catalogue gives 409: the title is the
// reason phrase, as in the REST problem of the same type.
func TestOperations_FailedWithAProblemCode_TitleIsItsReasonPhrase(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	holdJobs(t, e)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "2.0.0")))
	retire(t, e, tok, pid)
	e.StartWorker()
	opID := op["id"].(string)
	views := failedOperationErrors(t, e, tok, opID)
	views["GET /release-operations/{id}"] = releaseOp(t, e, tok, releaseID(t, op))["error"]
	detail := resources.RetiredBeforeDispatch(parseInt(t, pid)).Detail
	want := operationProblem(resources.CodeProjectRetired, "Conflict", detail, opID)
	assertErrorViews(t, want, views)
}

// TestNodeCaches_Copy_Failed_ErrorIsAProblemDocument: a node cache copy
// the node has no room for fails insufficient_disk; its error is the
// problem document at the operation's decimal path.
func TestNodeCaches_Copy_Failed_ErrorIsAProblemDocument(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{MaxCacheBytes: 100 << 10})
	model := cacheModel(t, e, "org/model", true)
	opID := copyToNode(t, e, tok, "gpu-02", model)["id"].(string)
	views := failedOperationErrors(t, e, tok, opID)
	detail := fmt.Sprintf("the cache of node gpu-02 needs %d bytes, %d are free under its agent's "+
		"--max-cache-bytes cap of %d; remove caches the node no longer needs "+
		"(DELETE /node-caches/gpu-02/{model_id}) or raise the cap, then copy again",
		modelBytes("org/model"), 100<<10, 100<<10)
	want := operationProblem(resources.CodeInsufficientDisk, "Insufficient disk", detail, opID)
	assertErrorViews(t, want, views)
}

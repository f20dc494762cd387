package api_test

import (
	"context"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestReleases_Finished_UpdatedAtIsFinishedAtNotBeforeCreatedAt: an
// operation that ends (succeeded, failed by the pipeline, rejected) was last
// updated when it finished, exactly, and not before it was created; a
// rejection was decided then too. The release operation and its operation
// view say the same.
func TestReleases_Finished_UpdatedAtIsFinishedAtNotBeforeCreatedAt(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	addAdmin(t, e, otherAdmin)
	inUAT(t, e, tok, pid, "1.0.0")
	e.Pipeline.FailNext(1)
	failed := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "3.0.0")))
	apitest.PollOperation(t, e, tok, failed["id"].(string), "failed")
	prod := releaseID(t, prodRequest(t, e, tok, pid))
	by := resources.Actor{Label: otherAdmin}
	if _, err := e.Store.RejectRelease(context.Background(), by, prod, "not now"); err != nil {
		t.Fatal(err)
	}
	items, _ := releaseItems(t, e, tok, pid, "")
	if len(items) != 4 {
		t.Fatalf("release operations: %v", items)
	}
	for _, it := range items {
		id := parseInt(t, it["id"].(string))
		op := e.Do("GET", "/api/v1/operations/release:"+it["id"].(string), tok, nil).JSON(t)
		for _, got := range []map[string]any{releaseOp(t, e, tok, id), op} {
			assertFinishedAtUpdate(t, got)
		}
		if id == prod && it["decision"].(map[string]any)["at"] != it["finished_at"] {
			t.Errorf("rejection decided at %v, finished at %v", it["decision"], it["finished_at"])
		}
	}
}

// assertFinishedAtUpdate checks a finished operation's times: updated_at
// equals finished_at, and created_at is not after it.
func assertFinishedAtUpdate(t *testing.T, op map[string]any) {
	t.Helper()
	if op["finished_at"] == nil || op["updated_at"] != op["finished_at"] {
		t.Errorf("%v %v: updated_at %v, finished_at %v", op["id"], op["status"],
			op["updated_at"], op["finished_at"])
		return
	}
	created, err1 := time.Parse(time.RFC3339Nano, op["created_at"].(string))
	updated, err2 := time.Parse(time.RFC3339Nano, op["updated_at"].(string))
	if err1 != nil || err2 != nil || updated.Before(created) {
		t.Errorf("%v: created_at %v after updated_at %v (%v %v)", op["id"],
			created, updated, err1, err2)
	}
}

// TestReleases_Approved_DecisionAtIsTheApprovalsUpdatedAt: an approval's
// decision.at is the instant its write stamped updated_at (the store's
// clock, never before the row's last change), not a second reading of
// another clock microseconds apart.
func TestReleases_Approved_DecisionAtIsTheApprovalsUpdatedAt(t *testing.T) {
	e, tok := projectEnv(t)
	_, prod := prodAwaitingApproval(t, e, tok)
	before := releaseOp(t, e, tok, prod)
	op, err := e.Store.ApproveRelease(t.Context(), resources.Actor{Label: otherAdmin}, prod, "")
	if err != nil {
		t.Fatal(err)
	}
	created, _ := time.Parse(time.RFC3339Nano, before["updated_at"].(string))
	if op.Decision == nil || !op.Decision.At.Equal(op.UpdatedAt) || op.UpdatedAt.Before(created) {
		t.Fatalf("decision %+v, updated_at %v (before the approval %v)", op.Decision, op.UpdatedAt,
			created)
	}
}

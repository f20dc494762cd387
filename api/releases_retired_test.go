package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// holdJobs stops the Env's worker: jobs queued from now on wait until the
// test starts another (e.StartWorker).
func holdJobs(t *testing.T, e *apitest.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Worker.StopAndCancel(ctx); err != nil {
		t.Fatalf("stopping the worker: %v", err)
	}
}

// assertFailedRetired checks that a finished operation failed with
// project_retired and a detail saying the project was retired.
func assertFailedRetired(t *testing.T, op map[string]any, pid string) {
	t.Helper()
	oe, _ := op["error"].(map[string]any)
	detail, _ := oe["detail"].(string)
	if op["status"] != "failed" || oe["code"] != "project_retired" ||
		!strings.Contains(detail, "project "+pid+" was retired") || op["finished_at"] == nil ||
		op["result"] != nil {
		t.Fatalf("operation of a promotion whose project was retired: %v", op)
	}
}

// assertNotDispatched checks that the pipeline never saw release operation id.
func assertNotDispatched(t *testing.T, e *apitest.Env, id int64) {
	t.Helper()
	for _, run := range e.Pipeline.Runs() {
		if run.Dispatch.ReleaseOperationID == id {
			t.Fatalf("the promotion of a retired project was dispatched: %+v", run)
		}
	}
}

// releaseState reads the project's release state.
func releaseState(t *testing.T, e *apitest.Env, tok, pid string) map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil)
	if r.Status != 200 {
		t.Fatalf("release state: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

// deployedVersion is the version the release state shows for env and
// component (nil: none reported).
func deployedVersion(st map[string]any, env, component string) any {
	d, _ := st["environments"].(map[string]any)[env].(map[string]any)[component].(map[string]any)
	if d == nil {
		return nil
	}
	return d["version"]
}

// TestReleases_ProjectRetiredBeforeDispatch_OperationFailsProjectRetired:
// a dev promotion accepted while its job waits, then its project retired:
// the job never dispatches it; the operation ends failed with
// project_retired, the system's change is audited, dev still runs what it
// ran and nothing stays open.
func TestReleases_ProjectRetiredBeforeDispatch_OperationFailsProjectRetired(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")
	holdJobs(t, e)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "2.0.0")))
	retire(t, e, tok, pid)
	e.StartWorker()
	done := apitest.PollOperation(t, e, tok, op["id"].(string), "failed")
	assertFailedRetired(t, done, pid)
	id := releaseID(t, op)
	assertNotDispatched(t, e, id)
	st := releaseState(t, e, tok, pid)
	if deployedVersion(st, "dev", "app-api") != "1.0.0" || len(st["open_operations"].([]any)) != 0 {
		t.Fatalf("release state after the refused dispatch: %v", st)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=release_operation&entity_id="+formatInt(id))
	if len(items) != 2 || items[1]["action"] != "release.request" {
		t.Fatalf("events of the promotion: %v", items)
	}
	ev := items[0]
	after, _ := ev["after_state"].(map[string]any)["release_operation"].(map[string]any)
	if ev["action"] != "release.fail" || ev["actor"] != "system" || ev["auth_kind"] != nil ||
		ev["before_state"].(map[string]any)["status"] != "pending" || after["status"] != "failed" ||
		after["error"].(map[string]any)["code"] != "project_retired" {
		t.Fatalf("the system's event: %v", ev)
	}
}

// TestReleases_ProjectRetiredWhileDispatchRetries_OperationFailsProjectRetired:
// a promotion whose dispatch the pipeline has not accepted yet (it was
// unavailable; the job retries) is not sent once its project is retired.
func TestReleases_ProjectRetiredWhileDispatchRetries_OperationFailsProjectRetired(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Pipeline.SetUnavailable(true)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "3.0.0")))
	waitDispatchFailedOnce(t, e)
	retire(t, e, tok, pid)
	e.Pipeline.SetUnavailable(false)
	done := apitest.PollOperation(t, e, tok, op["id"].(string), "failed")
	assertFailedRetired(t, done, pid)
	assertNotDispatched(t, e, releaseID(t, op))
	if st := releaseState(t, e, tok, pid); deployedVersion(st, "dev", "www") != nil {
		t.Fatalf("release state: %v", st)
	}
}

// TestReleases_ProjectRetiredAfterDispatch_PipelineReportStillEndsIt: a
// promotion the pipeline accepted before the retirement is left to the
// pipeline: its report ends it and is recorded as what dev runs.
func TestReleases_ProjectRetiredAfterDispatch_PipelineReportStillEndsIt(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Pipeline.SetDelay(time.Hour) // the run reports only by hand below
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "4.0.0")))
	id := releaseID(t, op)
	testkit.Eventually(t, 0, "the pipeline accepted the dispatch", func() bool {
		return len(e.Pipeline.Runs()) == 1 &&
			count(t, e, `SELECT count(*) FROM river_job
				WHERE kind = 'release_promotion' AND state = 'completed'`) == 1
	})
	retire(t, e, tok, pid)
	report := resources.DeployReport{ReleaseOperationID: id, ProjectID: parseInt(t, pid), Env: "dev",
		Component: "app-api", Version: "4.0.0", By: "pipeline:late", Succeeded: true}
	if err := e.Store.ReportDeploy(context.Background(), report); err != nil {
		t.Fatalf("the pipeline's report after the retirement: %v", err)
	}
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	if st := releaseState(t, e, tok, pid); deployedVersion(st, "dev", "app-api") != "4.0.0" {
		t.Fatalf("release state: %v", st)
	}
}

// TestReleases_ProdAwaitingApproval_ProjectRetired_ApproveRefusedRejectEndsIt:
// a prod promotion awaiting approval when its project is retired can no
// longer be approved (409 project_retired, also for the requester without
// a note, nothing recorded); a rejection still ends it failed, and prod
// never ran it.
func TestReleases_ProdAwaitingApproval_ProjectRetired_ApproveRefusedRejectEndsIt(t *testing.T) {
	e, tok := projectEnv(t)
	pid, id := prodAwaitingApproval(t, e, tok)
	retire(t, e, tok, pid)
	events := count(t, e, "SELECT count(*) FROM audit_events")
	ctx := context.Background()
	deciders := []struct{ email, note string }{
		{otherAdmin, "approve on retired"},
		{apitest.AdminEmail, ""}, // the requester without a note: the retirement is the answer
	}
	for _, who := range deciders {
		_, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: who.email}, id, who.note)
		if codeOf(err) != resources.CodeProjectRetired {
			t.Fatalf("approval by %s on a retired project: %v", who.email, err)
		}
	}
	rel := releaseOp(t, e, tok, id)
	if rel["status"] != "awaiting_approval" || rel["decision"] != nil {
		t.Fatalf("after the refused approvals: %v", rel)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events"); n != events {
		t.Fatalf("refused approvals left %d events", n-events)
	}
	_, err := e.Store.RejectRelease(ctx, resources.Actor{Label: otherAdmin}, id, "project retired")
	if err != nil {
		t.Fatalf("reject on a retired project: %v", err)
	}
	done := apitest.PollOperation(t, e, tok, resources.ReleaseOperationRef(id), "failed")
	if oe := done["error"].(map[string]any); oe["code"] != "release_rejected" {
		t.Fatalf("rejected: %v", done)
	}
	assertNotDispatched(t, e, id)
	st := releaseState(t, e, tok, pid)
	if deployedVersion(st, "prod", "app-api") != nil || len(st["open_operations"].([]any)) != 0 {
		t.Fatalf("release state: %v", st)
	}
}

// waitDispatchFailedOnce waits until a promotion's dispatch job has failed
// at least once (the pipeline unavailable) and is being retried.
func waitDispatchFailedOnce(t *testing.T, e *apitest.Env) {
	t.Helper()
	testkit.Eventually(t, 0, "the dispatch failed once", func() bool {
		return count(t, e, `SELECT count(*) FROM river_job
			WHERE kind = 'release_promotion' AND cardinality(errors) > 0`) > 0
	})
}

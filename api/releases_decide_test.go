package api_test

import (
	"context"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func TestReleases_ProdPromotion_RejectedEndsFailedWithTheReason(t *testing.T) {
	e, tok := projectEnv(t)
	pid, id := prodAwaitingApproval(t, e, tok)
	ctx := context.Background()
	if _, err := e.Store.RejectRelease(ctx, resources.Actor{Label: otherAdmin}, id, ""); codeOf(err) != resources.CodeValidationFailed {
		t.Fatalf("rejection without a reason: %v", err)
	}
	r, err := e.Store.RejectRelease(ctx, resources.Actor{Label: otherAdmin}, id, "not during the sale")
	if err != nil || r.Status != resources.OpFailed {
		t.Fatalf("reject: %v %v", r, err)
	}
	done := apitest.PollOperation(t, e, tok, resources.ReleaseOperationRef(id), "failed")
	if oe := done["error"].(map[string]any); oe["code"] != "release_rejected" || oe["detail"] != "not during the sale" || done["finished_at"] == nil {
		t.Fatalf("operation: %v", done)
	}
	rel := releaseOp(t, e, tok, id)
	d := rel["decision"].(map[string]any)
	if rel["status"] != "failed" || d["outcome"] != "rejected" || d["by"] != otherAdmin || d["reason"] != "not during the sale" ||
		d["note"] != nil || d["at"] == nil {
		t.Fatalf("release operation: %v", rel)
	}
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: otherAdmin}, id, "changed my mind"); codeOf(err) != resources.CodeNotAwaitingApproval {
		t.Fatalf("approve after rejection: %v", err)
	}
	if _, err := e.Store.RejectRelease(ctx, resources.Actor{Label: otherAdmin}, id, "again"); codeOf(err) != resources.CodeNotAwaitingApproval {
		t.Fatalf("reject twice: %v", err)
	}
	for _, run := range e.Pipeline.Runs() {
		if run.Dispatch.TargetEnv == "prod" {
			t.Fatalf("a rejected promotion was dispatched: %v", run)
		}
	}
	st := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)
	if st["environments"].(map[string]any)["prod"].(map[string]any)["app-api"] != nil || len(st["open_operations"].([]any)) != 0 {
		t.Fatalf("state: %v", st)
	}
}

func TestReleases_ProdApproval_RequesterNeedsANoteAnotherPersonDoesNot(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	addAdmin(t, e, otherAdmin)
	inUAT(t, e, tok, pid, "1.0.0")
	ctx := context.Background()
	op := prodRequest(t, e, tok, pid)
	id := releaseID(t, op)
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: apitest.AdminEmail}, id, ""); codeOf(err) != resources.CodeApprovalNoteRequired {
		t.Fatalf("the requester approved without a note: %v", err)
	}
	if rel := releaseOp(t, e, tok, id); rel["status"] != "awaiting_approval" || rel["decision"] != nil {
		t.Fatalf("after the refused approval: %v", rel)
	}
	r, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: otherAdmin}, id, "")
	if err != nil || r.Status != resources.OpPending {
		t.Fatalf("another person without a note: %v %v", r, err)
	}
	done := apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	if done["result"].(map[string]any)["version"] != "1.0.0" {
		t.Fatalf("prod: %v", done)
	}
	d := releaseOp(t, e, tok, id)["decision"].(map[string]any)
	if d["outcome"] != "approved" || d["by"] != otherAdmin || d["note"] != nil || d["reason"] != nil {
		t.Fatalf("decision: %v", d)
	}
	prod := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)["environments"].(map[string]any)["prod"].(map[string]any)
	if prod["app-api"].(map[string]any)["version"] != "1.0.0" {
		t.Fatalf("prod state: %v", prod)
	}
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: otherAdmin}, id, ""); codeOf(err) != resources.CodeNotAwaitingApproval {
		t.Fatalf("second approval: %v", err)
	}
	// A service account's token counts as made by whoever minted it.
	if _, err := e.Portal.CreateServiceAccount(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewServiceAccount{Name: "deployer",
		Permissions: []string{resources.PermReleasesWrite, resources.PermReleasesRead}}); err != nil {
		t.Fatal(err)
	}
	sat := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "ci", ServiceAccount: "deployer",
		Scopes: []string{resources.PermReleasesWrite, resources.PermReleasesRead}})
	op = prodRequest(t, e, sat, pid)
	id = releaseID(t, op)
	if rel := releaseOp(t, e, tok, id); rel["requested_by"] == apitest.AdminEmail {
		t.Fatalf("requested_by: %v", rel["requested_by"])
	}
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: apitest.AdminEmail}, id, ""); codeOf(err) != resources.CodeApprovalNoteRequired {
		t.Fatalf("the minter approved without a note: %v", err)
	}
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: apitest.AdminEmail}, id, "checked the diff"); err != nil {
		t.Fatalf("the minter with a note: %v", err)
	}
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
}

func TestReleases_PipelineFailure_PromotionEndsFailed(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Pipeline.FailNext(1)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "3.0.0")))
	done := apitest.PollOperation(t, e, tok, op["id"].(string), "failed")
	if oe := done["error"].(map[string]any); oe["code"] != "pipeline_failed" || !strings.Contains(oe["detail"].(string), "simulated") ||
		done["finished_at"] == nil || done["result"] != nil {
		t.Fatalf("failed operation: %v", done)
	}
	st := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)
	if st["environments"].(map[string]any)["dev"].(map[string]any)["www"] != nil || len(st["open_operations"].([]any)) != 0 {
		t.Fatalf("state after a failed run: %v", st)
	}
	deployed(t, e, tok, pid, "www", "dev", "3.0.1")
	if n := len(e.Pipeline.Runs()); n != 2 {
		t.Fatalf("runs: %d", n)
	}
}

func TestReleases_PipelineUnavailable_PromotionStaysOpenThenSucceeds(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Pipeline.SetUnavailable(true)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "4.0.0")))
	waitDispatchFailedOnce(t, e)
	got := e.Do("GET", "/api/v1/operations/"+op["id"].(string), tok, nil).JSON(t)
	if got["status"] != "running" && got["status"] != "pending" {
		t.Fatalf("while the pipeline is unavailable: %v", got)
	}
	if n := len(e.Pipeline.Runs()); n != 0 {
		t.Fatalf("runs while unavailable: %d", n)
	}
	e.Pipeline.SetUnavailable(false)
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	if runs := e.Pipeline.Runs(); len(runs) != 1 || runs[0].Dispatch.Version != "4.0.0" {
		t.Fatalf("runs: %v", runs)
	}
}

func TestReleases_EveryWrite_AuditEventWithActorAuthKindTokenAndRequestID(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	addAdmin(t, e, otherAdmin)
	tid := tokenID(t, e, tok)
	fromAPI := func(ev map[string]any, action, requestID string) {
		t.Helper()
		if ev["action"] != action || ev["actor"] != apitest.AdminEmail || ev["auth_kind"] != "pat" || ev["token_id"] != tid ||
			ev["request_id"] != requestID || ev["source_ip"] != "127.0.0.1" {
			t.Fatalf("event: %v", ev)
		}
	}
	dev := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "1.0.0"), "X-Request-ID", "promote-dev"))
	apitest.PollOperation(t, e, tok, dev["id"].(string), "succeeded")
	devID := formatInt(releaseID(t, dev))
	items, _ := auditItems(t, e, tok, "?entity_type=release_operation&entity_id="+devID)
	if len(items) != 2 {
		t.Fatalf("dev events: %v", items)
	}
	report, request := items[0], items[1]
	fromAPI(request, "release.request", "promote-dev")
	if request["after_state"].(map[string]any)["version"] != "1.0.0" || request["before_state"] != nil {
		t.Fatalf("request states: %v", request)
	}
	if report["action"] != "release.deploy_report" || !strings.HasPrefix(report["actor"].(string), "pipeline:") ||
		report["auth_kind"] != nil || report["token_id"] != nil || report["request_id"] != nil {
		t.Fatalf("report event: %v", report)
	}
	lock := e.Do("PUT", "/api/v1/projects/"+pid+"/prod-lock", tok, map[string]any{"locked": true}, "X-Request-ID", "lock-1")
	if lock.Status != 200 {
		t.Fatalf("lock: %d %s", lock.Status, lock.Body)
	}
	items, _ = auditItems(t, e, tok, "?action=prod_lock.set")
	if len(items) != 1 {
		t.Fatalf("lock events: %v", items)
	}
	fromAPI(items[0], "prod_lock.set", "lock-1")
	if items[0]["entity_type"] != "project" || items[0]["entity_id"] != pid ||
		items[0]["before_state"].(map[string]any)["locked"] != false || items[0]["after_state"].(map[string]any)["locked"] != true ||
		items[0]["after_state"].(map[string]any)["changed_by"] != apitest.AdminEmail {
		t.Fatalf("lock event: %v", items[0])
	}
	deployed(t, e, tok, pid, "app-api", "uat", "")
	prod := prodRequest(t, e, tok, pid, "X-Request-ID", "promote-prod")
	prodID := formatInt(releaseID(t, prod))
	if _, err := e.Store.ApproveRelease(context.Background(), resources.Actor{Label: otherAdmin}, releaseID(t, prod), "ok"); err != nil {
		t.Fatal(err)
	}
	apitest.PollOperation(t, e, tok, prod["id"].(string), "succeeded")
	items, _ = auditItems(t, e, tok, "?entity_type=release_operation&entity_id="+prodID)
	if len(items) != 3 {
		t.Fatalf("prod events: %v", items)
	}
	fromAPI(items[2], "release.request", "promote-prod")
	approve := items[1]
	if approve["action"] != "release.approve" || approve["actor"] != otherAdmin || approve["auth_kind"] != "session" ||
		approve["token_id"] != nil || approve["before_state"].(map[string]any)["status"] != "awaiting_approval" ||
		approve["after_state"].(map[string]any)["status"] != "pending" {
		t.Fatalf("approve event: %v", approve)
	}
	if items[0]["action"] != "release.deploy_report" {
		t.Fatalf("report event: %v", items[0])
	}
	c, err := e.Store.BookDataCopy(context.Background(), resources.Actor{Label: otherAdmin}, parseInt(t, pid), "uat", "dev")
	if err != nil {
		t.Fatal(err)
	}
	items, _ = auditItems(t, e, tok, "?entity_type=release_operation&entity_id="+formatInt(c.ID))
	if len(items) != 1 || items[0]["action"] != "release.data_copy_book" || items[0]["actor"] != otherAdmin || items[0]["auth_kind"] != "session" {
		t.Fatalf("data copy events: %v", items)
	}
	// Refused writes leave no event.
	before := count(t, e, "SELECT count(*) FROM audit_events")
	assertProblem(t, postPromotion(e, tok, pid, promotion("www", "uat", "")), 422, "version_not_at_source")
	assertProblem(t, e.Do("PUT", "/api/v1/projects/"+pid+"/prod-lock", tok, map[string]any{"locked": false}), 422, "unlock_not_confirmed")
	if n := count(t, e, "SELECT count(*) FROM audit_events"); n != before {
		t.Fatalf("refused writes left %d events", n-before)
	}
}

func TestReleases_DeployReport_EndsOnlyADispatchedPromotionAndRepeatsChangeNothing(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	inUAT(t, e, tok, pid, "1.0.0")
	ctx := context.Background()
	id := parseInt(t, pid)
	prod := prodRequest(t, e, tok, pid)
	prodID := releaseID(t, prod)
	// A report can never skip the approval of a prod promotion.
	err := e.Store.ReportDeploy(ctx, resources.DeployReport{ReleaseOperationID: prodID, ProjectID: id, Env: "prod",
		Component: "app-api", Version: "1.0.0", By: "pipeline:manual-1", Succeeded: true})
	if err == nil {
		t.Fatal("a report ended a prod promotion awaiting approval")
	}
	if err := e.Store.ReportDeploy(ctx, resources.DeployReport{ProjectID: id, Env: "prod", Component: "app-api",
		Version: "1.0.0", By: "pipeline:manual-1"}); codeOf(err) != resources.CodeReleaseOperationNotFound {
		t.Fatalf("failure report matching no dispatched promotion: %v", err)
	}
	if rel := releaseOp(t, e, tok, prodID); rel["status"] != "awaiting_approval" {
		t.Fatalf("prod after the reports: %v", rel)
	}
	c, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, id, "prod", "uat")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.ReportDeploy(ctx, resources.DeployReport{ReleaseOperationID: c.ID, ProjectID: id, Env: "uat",
		Component: "app-api", Version: "1.0.0", By: "pipeline:manual-2", Succeeded: true}); err == nil {
		t.Fatal("a deploy report ended a data copy")
	}
	st := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)
	envs := st["environments"].(map[string]any)
	if envs["prod"].(map[string]any)["app-api"] != nil || envs["uat"].(map[string]any)["app-api"].(map[string]any)["version"] != "1.0.0" {
		t.Fatalf("state: %v", envs)
	}
	// A pipeline that cannot be reached by the worker reports by hand: the
	// oldest open promotion of that project, env, component and version ends.
	e.Pipeline.SetUnavailable(true)
	dev := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "5.0.0")))
	report := resources.DeployReport{ProjectID: id, Env: "dev", Component: "www", Version: "5.0.0", By: "pipeline:manual-3", Succeeded: true}
	if err := e.Store.ReportDeploy(ctx, report); err != nil {
		t.Fatal(err)
	}
	apitest.PollOperation(t, e, tok, dev["id"].(string), "succeeded")
	d := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)["environments"].(map[string]any)["dev"].(map[string]any)["www"].(map[string]any)
	if d["version"] != "5.0.0" || d["reported_by"] != "pipeline:manual-3" || d["reported_at"] == nil {
		t.Fatalf("dev www: %v", d)
	}
	events := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'release.deploy_report'")
	report.ReleaseOperationID = releaseID(t, dev)
	report.Succeeded, report.By = false, "pipeline:manual-4"
	if err := e.Store.ReportDeploy(ctx, report); err != nil {
		t.Fatalf("a repeated report: %v", err)
	}
	if rel := releaseOp(t, e, tok, releaseID(t, dev)); rel["status"] != "succeeded" {
		t.Fatalf("a repeated report changed the promotion: %v", rel)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'release.deploy_report'"); n != events {
		t.Fatalf("a repeated report wrote %d events", n-events)
	}
	// A failure report without a reason gets one.
	failing := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "5.0.1")))
	if err := e.Store.ReportDeploy(ctx, resources.DeployReport{ReleaseOperationID: releaseID(t, failing), ProjectID: id, Env: "dev",
		Component: "www", Version: "5.0.1", By: "pipeline:manual-5"}); err != nil {
		t.Fatal(err)
	}
	done := apitest.PollOperation(t, e, tok, failing["id"].(string), "failed")
	if oe := done["error"].(map[string]any); oe["code"] != "pipeline_failed" || oe["detail"] == "" {
		t.Fatalf("failed: %v", done)
	}
}

package api_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// TestReleases_DeployReportWithoutPromotion_RecordedAndUATPromotesIt: a dev
// deploy started outside the API (portal, push) is recorded from the
// pipeline's report, and a uat promotion over the API then takes it.
func TestReleases_DeployReportWithoutPromotion_RecordedAndUATPromotesIt(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	id := parseInt(t, pid)
	report := resources.DeployReport{ProjectID: id, Env: "dev", Component: "app-api", Version: "7.1.0",
		By: "pipeline:push-41", Succeeded: true}
	if err := e.Store.ReportDeploy(context.Background(), report); err != nil {
		t.Fatalf("report without a promotion: %v", err)
	}
	dev := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)["environments"].(map[string]any)["dev"].(map[string]any)["app-api"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"version": "7.1.0", "reported_by": "pipeline:push-41"},
		map[string]any{"version": dev["version"], "reported_by": dev["reported_by"]}); diff != "" || dev["reported_at"] == nil {
		t.Fatalf("dev app-api (-want +got):\n%s %v", diff, dev)
	}
	ev := e.Do("GET", "/api/v1/audit-events?action=release.deploy_report&entity_type=project&entity_id="+pid, tok, nil).JSON(t)
	if items := ev["items"].([]any); len(items) != 1 || items[0].(map[string]any)["actor"] != "pipeline:push-41" {
		t.Fatalf("audit of the report: %v", ev)
	}
	uat := deployed(t, e, tok, pid, "app-api", "uat", "")
	if diff := cmp.Diff(map[string]any{"version": "7.1.0", "target_env": "uat"}, uat["result"]); diff != "" {
		t.Fatalf("uat promotion result (-want +got):\n%s", diff)
	}
}

// TestReleases_DeployReportWithoutPromotion_BadReportsRefusedNothingRecorded:
// an unknown project, environment or component, a bad version and a failure
// nothing accounts for change nothing.
func TestReleases_DeployReportWithoutPromotion_BadReportsRefusedNothingRecorded(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", shop("", "components", []string{"www"}))
	id := parseInt(t, pid)
	ok := resources.DeployReport{ProjectID: id, Env: "dev", Component: "www", Version: "1.0.0", By: "pipeline:1", Succeeded: true}
	for name, tc := range map[string]struct {
		change func(*resources.DeployReport)
		code   string
	}{
		"unknown project":     {func(r *resources.DeployReport) { r.ProjectID = 999 }, resources.CodeProjectNotFound},
		"sandbox":             {func(r *resources.DeployReport) { r.Env = "sandbox" }, resources.CodeValidationFailed},
		"component not on it": {func(r *resources.DeployReport) { r.Component = "app-api" }, resources.CodeComponentNotEnabled},
		"bad version":         {func(r *resources.DeployReport) { r.Version = "-1" }, resources.CodeValidationFailed},
		"failure":             {func(r *resources.DeployReport) { r.Succeeded = false }, resources.CodeReleaseOperationNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			r := ok
			tc.change(&r)
			if err := e.Store.ReportDeploy(context.Background(), r); codeOf(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
	if n := count(t, e, "SELECT count(*) FROM deployments"); n != 0 {
		t.Fatalf("%d deployments recorded by refused reports", n)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'release.deploy_report'"); n != 0 {
		t.Fatalf("%d events of refused reports", n)
	}
}

package api_test

import (
	"strings"
	"testing"

	"platformapi/api/apitest"
)

const otherAdmin = "other@example.test"

// releaseOp reads GET /release-operations/{id}.
func releaseOp(t *testing.T, e *apitest.Env, tok string, id int64) map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/v1/release-operations/"+formatInt(id), tok, nil)
	if r.Status != 200 {
		t.Fatalf("release operation %d: %d %s", id, r.Status, r.Body)
	}
	return r.JSON(t)
}

// releaseItems lists the project's release operations with the query and
// returns the items.
func releaseItems(t *testing.T, e *apitest.Env, tok, pid, query string) ([]map[string]any, any) {
	t.Helper()
	r := e.Do("GET", "/api/v1/projects/"+pid+"/release-operations"+query, tok, nil)
	if r.Status != 200 {
		t.Fatalf("list %s: %d %s", query, r.Status, r.Body)
	}
	m := r.JSON(t)
	var out []map[string]any
	for _, it := range m["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out, m["next_cursor"]
}

// inUAT deploys app-api version v through dev to uat.
func inUAT(t *testing.T, e *apitest.Env, tok, pid, v string) {
	t.Helper()
	deployed(t, e, tok, pid, "app-api", "dev", v)
	deployed(t, e, tok, pid, "app-api", "uat", "")
}

// prodRequest requests a prod promotion of app-api and checks it awaits
// approval; it returns the operation.
func prodRequest(t *testing.T, e *apitest.Env, tok, pid string, headers ...string) map[string]any {
	t.Helper()
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "prod", ""), headers...))
	if op["status"] != "awaiting_approval" || op["finished_at"] != nil {
		t.Fatalf("prod request: %v", op)
	}
	return op
}

// prodAwaitingApproval makes an active project whose app-api 1.0.0 runs in
// uat, a second admin (otherAdmin) to decide, and a prod promotion of it
// awaiting approval; it returns the project's and the promotion's ids.
func prodAwaitingApproval(t *testing.T, e *apitest.Env, tok string) (string, int64) {
	t.Helper()
	pid, _ := activeProject(t, e, tok, "", nil)
	addAdmin(t, e, otherAdmin)
	inUAT(t, e, tok, pid, "1.0.0")
	return pid, releaseID(t, prodRequest(t, e, tok, pid))
}

func tokenID(t *testing.T, e *apitest.Env, tok string) string {
	t.Helper()
	return e.Do("GET", "/api/v1/whoami", tok, nil).JSON(t)["token"].(map[string]any)["id"].(string)
}

func TestReleases_UnknownProject_404ProjectNotFoundOnEveryProjectEndpoint(t *testing.T) {
	e, tok := projectEnv(t)
	activeProject(t, e, tok, "", nil)
	p := "/api/v1/projects/999"
	for _, r := range []*apitest.Response{
		e.Do("GET", p+"/prod-lock", tok, nil),
		e.Do("PUT", p+"/prod-lock", tok, map[string]any{"locked": true}),
		e.Do("PUT", p+"/prod-lock", tok, map[string]any{"locked": false, "confirm_unlock": "SHOP"}),
		e.Do("GET", p+"/release-operations", tok, nil),
		e.Do("GET", p+"/release-operations?status=failed&component=www", tok, nil),
		e.Do("GET", p+"/release-state", tok, nil),
		postPromotion(e, tok, "999", promotion("app-api", "dev", "1.0.0")),
		postPromotion(e, tok, "999", promotion("app-api", "uat", "")),
		postPromotion(e, tok, "999", promotion("api", "prod", "")),
		postPromotion(e, tok, "999", promotion("www", "dev", "1.0.0"), "Idempotency-Key", "unknown-project"),
	} {
		assertProblem(t, r, 404, "project_not_found")
	}
	assertProblem(t, e.Do("GET", "/api/v1/projects/0/release-state", tok, nil), 400, "invalid_parameter")
	if n := count(t, e, "SELECT count(*) FROM release_operations") + count(t, e, "SELECT count(*) FROM prod_locks"); n != 0 {
		t.Fatalf("rows written: %d", n)
	}
}

func TestReleases_UnknownReleaseOperation_404ReleaseOperationNotFound(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0") // release operation 1 exists
	assertProblem(t, e.Do("GET", "/api/v1/release-operations/999", tok, nil), 404, "release_operation_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/operations/release:999", tok, nil), 404, "release_operation_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/release-operations/0", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("GET", "/api/v1/operations/release:0", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("GET", "/api/v1/operations/release:abc", tok, nil), 400, "invalid_parameter")
}

func TestReleases_RetiredProject_409ProjectRetiredOnPromotionAndProdLock(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	inUAT(t, e, tok, pid, "1.0.0")
	if r := e.Do("PUT", "/api/v1/projects/"+pid+"/prod-lock", tok, map[string]any{"locked": true}); r.Status != 200 {
		t.Fatalf("lock: %d %s", r.Status, r.Body)
	}
	retire(t, e, tok, pid)
	ops := count(t, e, "SELECT count(*) FROM release_operations")
	for _, env := range []string{"dev", "uat", "prod"} {
		assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", env, "1.0.0")), 409, "project_retired")
	}
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "prod", "")), 409, "project_retired")
	for _, body := range []map[string]any{{"locked": true}, {"locked": false, "confirm_unlock": "SHOP"}, {"locked": false}} {
		assertProblem(t, e.Do("PUT", "/api/v1/projects/"+pid+"/prod-lock", tok, body), 409, "project_retired")
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != ops {
		t.Fatalf("a retired project took a release: %d operations, was %d", n, ops)
	}
	l := e.Do("GET", "/api/v1/projects/"+pid+"/prod-lock", tok, nil).JSON(t)
	if l["locked"] != true {
		t.Fatalf("the lock changed: %v", l)
	}
	if r := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil); r.Status != 200 {
		t.Fatalf("release state of a retired project: %d", r.Status)
	}
}

func TestReleases_Promotion_SameKeyOtherRequest_409IdempotencyKeyReused(t *testing.T) {
	e, tok := projectEnv(t)
	pid, cid := activeProject(t, e, tok, "", nil)
	other, _ := activeProject(t, e, tok, cid, shop(cid, "short_name", "OTHER"))
	first := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "1.0.0"), "Idempotency-Key", "deploy-1"))
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "1.0.1"), "Idempotency-Key", "deploy-1"),
		409, "idempotency_key_reused")
	assertProblem(t, postPromotion(e, tok, pid, promotion("www", "dev", "1.0.0"), "Idempotency-Key", "deploy-1"),
		409, "idempotency_key_reused")
	assertProblem(t, postPromotion(e, tok, other, promotion("app-api", "dev", "1.0.0"), "Idempotency-Key", "deploy-1"),
		409, "idempotency_key_reused")
	again := postPromotion(e, tok, pid, promotion("app-api", "dev", "1.0.0"), "Idempotency-Key", "deploy-1")
	if again.Status != 202 || again.Header.Get("Idempotent-Replayed") != "true" || again.JSON(t)["id"] != first["id"] {
		t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Body)
	}
	apitest.PollOperation(t, e, tok, first["id"].(string), "succeeded")
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 1 {
		t.Fatalf("release operations: %d", n)
	}
}

func TestReleases_Promotion_VMProject_422VMProjectsUnsupported(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", shop("", "kind", "vm"))
	for _, env := range []string{"dev", "uat", "prod"} {
		assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", env, "1.0.0")), 422, "vm_projects_unsupported")
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 0 {
		t.Fatalf("release operations: %d", n)
	}
}

func TestReleases_Promotion_ComponentNotEnabled_422(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", shop("", "components", []string{"app-api"}))
	for _, c := range []struct{ component, env, version string }{
		{"api", "dev", "1.0.0"}, {"www", "dev", "1.0.0"}, {"www", "uat", ""}, {"www", "prod", "1.0.0"}, {"API-APP", "dev", "1"},
	} {
		m := assertProblem(t, postPromotion(e, tok, pid, promotion(c.component, c.env, c.version)), 422, "component_not_enabled")
		if m["field"] != "component" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	// No component is named "" (an unset variable, say): it is not enabled
	// either (contract, promotion rule 5). Past the schema's 40 characters
	// the refusal is the length's.
	for component, code := range map[string]string{"": "component_not_enabled",
		strings.Repeat("a", 41): "validation_failed"} {
		m := assertProblem(t, postPromotion(e, tok, pid, promotion(component, "dev", "1.0.0")), 422, code)
		if m["field"] != "component" {
			t.Fatalf("component %q: field %v", component, m["field"])
		}
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 0 {
		t.Fatalf("release operations: %d", n)
	}
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")
}

func TestReleases_Promotion_DevWithoutVersion_422VersionRequired(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	for _, body := range []map[string]any{promotion("www", "dev", ""), {"component": "www", "target_env": "dev", "version": nil}} {
		m := assertProblem(t, postPromotion(e, tok, pid, body), 422, "version_required")
		if m["field"] != "version" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	for _, v := range []string{"1 0", ".1", "-1", "1/0", strings.Repeat("v", 65)} {
		if m := assertProblem(t, postPromotion(e, tok, pid, promotion("www", "dev", v)), 422, "validation_failed"); m["field"] != "version" {
			t.Fatalf("%q: field %v", v, m["field"])
		}
	}
	for _, env := range []string{"sandbox", "staging", "PROD"} {
		assertProblem(t, postPromotion(e, tok, pid, promotion("www", env, "1.0.0")), 422, "validation_failed")
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 0 {
		t.Fatalf("release operations: %d", n)
	}
	done := deployed(t, e, tok, pid, "www", "dev", "_b."+strings.Repeat("9", 61))
	if done["result"].(map[string]any)["version"] != "_b."+strings.Repeat("9", 61) {
		t.Fatalf("result: %v", done["result"])
	}
}

func TestReleases_Promotion_VersionNotAtSource_422(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	// Nothing reported in dev or uat yet.
	for _, b := range []map[string]any{promotion("app-api", "uat", ""), promotion("app-api", "uat", "1.0.0"),
		promotion("app-api", "prod", ""), promotion("app-api", "prod", "1.0.0")} {
		if m := assertProblem(t, postPromotion(e, tok, pid, b), 422, "version_not_at_source"); m["field"] != "version" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")
	// Another version than dev's, the other component, and prod before uat.
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "uat", "2.0.0")), 422, "version_not_at_source")
	assertProblem(t, postPromotion(e, tok, pid, promotion("www", "uat", "")), 422, "version_not_at_source")
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "prod", "1.0.0")), 422, "version_not_at_source")
	// A dev promotion that failed is not what dev runs.
	e.Pipeline.FailNext(1)
	failed := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "2.0.0")))
	apitest.PollOperation(t, e, tok, failed["id"].(string), "failed")
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "uat", "2.0.0")), 422, "version_not_at_source")
	if n := count(t, e, "SELECT count(*) FROM release_operations WHERE target_env <> 'dev'"); n != 0 {
		t.Fatalf("refused promotions were booked: %d", n)
	}
	// The version dev runs is taken when omitted and accepted when named.
	if d := deployed(t, e, tok, pid, "app-api", "uat", ""); d["result"].(map[string]any)["version"] != "1.0.0" {
		t.Fatalf("uat took %v", d["result"])
	}
	deployed(t, e, tok, pid, "app-api", "uat", "1.0.0")
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "prod", "0.9.0")), 422, "version_not_at_source")
	if op := prodRequest(t, e, tok, pid); releaseOp(t, e, tok, releaseID(t, op))["version"] != "1.0.0" {
		t.Fatalf("prod version")
	}
}

package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
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

// eventually polls cond (at most 10 s) until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	waitOperation(t, e, tok, first["id"].(string), "succeeded")
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
	m := assertProblem(t, postPromotion(e, tok, pid, promotion("", "dev", "1.0.0")), 422, "validation_failed")
	if m["field"] != "component" {
		t.Fatalf("empty component: field %v", m["field"])
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
	waitOperation(t, e, tok, failed["id"].(string), "failed")
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

func TestReleases_ProdLock_UnlockNotConfirmed_422(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	path := "/api/v1/projects/" + pid + "/prod-lock"
	if r := e.Do("PUT", path, tok, map[string]any{"locked": true}); r.Status != 200 {
		t.Fatalf("lock: %d %s", r.Status, r.Body)
	}
	for _, body := range []map[string]any{{"locked": false}, {"locked": false, "confirm_unlock": nil},
		{"locked": false, "confirm_unlock": "shop"}, {"locked": false, "confirm_unlock": "Shop"},
		{"locked": false, "confirm_unlock": "OTHER"}, {"locked": false, "confirm_unlock": ""},
		{"locked": false, "confirm_unlock": "SHOP "}, {"locked": false, "confirm_unlock": "yes"}} {
		m := assertProblem(t, e.Do("PUT", path, tok, body), 422, "unlock_not_confirmed")
		if m["field"] != "confirm_unlock" {
			t.Fatalf("%v: field %v", body, m["field"])
		}
	}
	assertProblem(t, e.Do("PUT", path, tok, map[string]any{"locked": false, "confirm_unlock": strings.Repeat("S", 65)}),
		422, "validation_failed")
	assertProblem(t, e.Do("PUT", path, tok, map[string]any{"confirm_unlock": "SHOP"}), 422, "validation_failed")
	assertProblem(t, e.Do("PUT", path, tok, map[string]any{"locked": "false", "confirm_unlock": "SHOP"}), 422, "validation_failed")
	if l := e.Do("GET", path, tok, nil).JSON(t); l["locked"] != true {
		t.Fatalf("unlocked without confirmation: %v", l)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'prod_lock.set'"); n != 1 {
		t.Fatalf("lock events: %d", n)
	}
}

func TestReleases_ProdLock_LockShowsAuthorSamePutKeepsItUnlockWithExactShortName(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	addAdmin(t, e, otherAdmin)
	other := e.TokenFor(otherAdmin, resources.NewToken{Name: "o", Scopes: []string{resources.PermReleasesWrite}})
	path := "/api/v1/projects/" + pid + "/prod-lock"
	l := e.Do("GET", path, tok, nil).JSON(t)
	if l["project_id"] != pid || l["locked"] != false || l["changed_at"] != nil || l["changed_by"] != nil {
		t.Fatalf("never locked: %v", l)
	}
	// Unlocking an unlocked project is a PUT to the state it has: nothing changes.
	if r := e.Do("PUT", path, tok, map[string]any{"locked": false}); r.Status != 200 || r.JSON(t)["changed_at"] != nil {
		t.Fatalf("unlock of unlocked: %d %s", r.Status, r.Body)
	}
	locked := e.Do("PUT", path, tok, map[string]any{"locked": true}).JSON(t)
	if locked["locked"] != true || locked["changed_by"] != apitest.AdminEmail || locked["changed_at"] == nil {
		t.Fatalf("locked: %v", locked)
	}
	at, err := time.Parse(time.RFC3339Nano, locked["changed_at"].(string))
	if err != nil || time.Since(at) > time.Minute || at.Location() != time.UTC {
		t.Fatalf("changed_at %v: %v", locked["changed_at"], err)
	}
	if got := e.Do("GET", path, tok, nil).JSON(t); got["locked"] != true || got["changed_at"] != locked["changed_at"] ||
		got["changed_by"] != apitest.AdminEmail {
		t.Fatalf("GET after lock: %v", got)
	}
	if st := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t); st["prod_lock"].(map[string]any)["locked"] != true {
		t.Fatalf("release state lock: %v", st["prod_lock"])
	}
	// Locking again, by someone else: time and author stay.
	again := e.Do("PUT", path, other, map[string]any{"locked": true, "confirm_unlock": "ignored"})
	if again.Status != 200 {
		t.Fatalf("lock again: %d %s", again.Status, again.Body)
	}
	if a := again.JSON(t); a["changed_at"] != locked["changed_at"] || a["changed_by"] != apitest.AdminEmail {
		t.Fatalf("a PUT to the same state changed the lock: %v", a)
	}
	unlocked := e.Do("PUT", path, other, map[string]any{"locked": false, "confirm_unlock": "SHOP"})
	if unlocked.Status != 200 {
		t.Fatalf("unlock: %d %s", unlocked.Status, unlocked.Body)
	}
	u := unlocked.JSON(t)
	if u["locked"] != false || u["changed_by"] != otherAdmin || u["changed_at"] == nil || u["changed_at"] == locked["changed_at"] {
		t.Fatalf("unlocked: %v", u)
	}
	if got := e.Do("GET", path, tok, nil).JSON(t); got["locked"] != false || got["changed_at"] != u["changed_at"] {
		t.Fatalf("GET after unlock: %v", got)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'prod_lock.set'"); n != 2 {
		t.Fatalf("lock events: %d", n)
	}
}

func TestReleases_ProdLock_LockedRefusesDataCopyIntoProdButNotPromotion(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	inUAT(t, e, tok, pid, "1.0.0")
	path := "/api/v1/projects/" + pid + "/prod-lock"
	e.Do("PUT", path, tok, map[string]any{"locked": true})
	ctx := context.Background()
	id := parseInt(t, pid)
	for _, from := range []string{"uat", "dev", "sandbox"} {
		if _, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, id, from, "prod"); codeOf(err) != resources.CodeProdLocked {
			t.Fatalf("copy %s → prod while locked: %v", from, err)
		}
	}
	if _, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, id, "prod", "uat"); err != nil {
		t.Fatalf("copy out of prod while locked: %v", err)
	}
	op := prodRequest(t, e, tok, pid)
	if _, err := e.Store.ApproveRelease(ctx, apitest.AdminEmail, releaseID(t, op), "locked data, code goes"); err != nil {
		t.Fatal(err)
	}
	waitOperation(t, e, tok, op["id"].(string), "succeeded")
	if n := count(t, e, "SELECT count(*) FROM release_operations WHERE kind = 'data_copy' AND target_env = 'prod'"); n != 0 {
		t.Fatalf("copies into prod booked: %d", n)
	}
	e.Do("PUT", path, tok, map[string]any{"locked": false, "confirm_unlock": "SHOP"})
	c, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, id, "uat", "prod")
	if err != nil || c.Status != resources.OpAwaitingOperator {
		t.Fatalf("copy into prod after unlock: %v %v", c, err)
	}
}

func TestReleases_List_NewestFirstFiltersDataCopiesIncluded(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	ctx := context.Background()
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")                                                       // 1
	deployed(t, e, tok, pid, "www", "dev", "2.0.0")                                                           // 2
	deployed(t, e, tok, pid, "app-api", "uat", "")                                                            // 3
	prodRequest(t, e, tok, pid)                                                                               // 4
	if _, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, parseInt(t, pid), "prod", "uat"); err != nil { // 5
		t.Fatal(err)
	}
	e.Pipeline.FailNext(1)
	failed := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "2.1.0"))) // 6
	waitOperation(t, e, tok, failed["id"].(string), "failed")
	ids := func(items []map[string]any) string {
		var out []string
		for _, it := range items {
			out = append(out, it["id"].(string))
		}
		return strings.Join(out, ",")
	}
	for q, want := range map[string]string{
		"": "6,5,4,3,2,1", "?status=succeeded": "3,2,1", "?status=failed": "6", "?status=awaiting_approval": "4",
		"?status=pending": "", "?status=running": "", "?target_env=dev": "6,2,1", "?target_env=uat": "5,3",
		"?target_env=prod": "4", "?target_env=sandbox": "", "?component=app-api": "4,3,1", "?component=www": "6,2",
		"?component=app-api&target_env=uat": "3", "?status=succeeded&target_env=dev&component=www": "2",
		"?status=failed&component=app-api": "",
	} {
		items, next := releaseItems(t, e, tok, pid, q)
		if got := ids(items); got != want || next != nil {
			t.Errorf("%s: %s (next %v), want %s", q, got, next, want)
		}
	}
	items, _ := releaseItems(t, e, tok, pid, "?target_env=uat")
	cp, promo := items[0], items[1]
	if cp["kind"] != "data_copy" || cp["component"] != nil || cp["source_env"] != "prod" || cp["version"] != nil ||
		cp["status"] != "awaiting_operator" || cp["requested_via"] != "portal" || cp["requested_by"] != apitest.AdminEmail ||
		cp["operation_id"] != "release:5" || cp["project_id"] != pid {
		t.Fatalf("data copy: %v", cp)
	}
	if promo["kind"] != "promotion" || promo["component"] != "app-api" || promo["source_env"] != "dev" || promo["version"] != "1.0.0" ||
		promo["requested_via"] != "api" || promo["requested_by"] != apitest.AdminEmail || promo["finished_at"] == nil ||
		promo["decision"] != nil || promo["error"] != nil {
		t.Fatalf("uat promotion: %v", promo)
	}
	if f, _ := releaseItems(t, e, tok, pid, "?status=failed"); f[0]["error"].(map[string]any)["code"] != "pipeline_failed" {
		t.Fatalf("failed: %v", f[0])
	}
	for _, q := range []string{"?status=awaiting_operator", "?status=done", "?target_env=staging", "?component=api", "?limit=0", "?limit=201"} {
		assertProblem(t, e.Do("GET", "/api/v1/projects/"+pid+"/release-operations"+q, tok, nil), 400, "invalid_parameter")
	}
	// The open operations of the release state: the prod request and the copy.
	st := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)
	var open []string
	for _, it := range st["open_operations"].([]any) {
		open = append(open, it.(map[string]any)["id"].(string))
	}
	if strings.Join(open, ",") != "5,4" {
		t.Fatalf("open operations: %v", open)
	}
}

func TestReleases_List_CursorPagesNewestFirst_OtherProjectsCursor400InvalidCursor(t *testing.T) {
	e, tok := projectEnv(t)
	pid, cid := activeProject(t, e, tok, "", nil)
	other, _ := activeProject(t, e, tok, cid, shop(cid, "short_name", "OTHER"))
	deployed(t, e, tok, other, "www", "dev", "0.1")
	for _, v := range []string{"1", "2", "3", "4"} {
		deployed(t, e, tok, pid, "app-api", "dev", v)
	}
	if _, err := e.Store.BookDataCopy(context.Background(), apitest.AdminEmail, parseInt(t, pid), "prod", "dev"); err != nil {
		t.Fatal(err)
	}
	var got []string
	cursor := ""
	for pages := 1; ; pages++ {
		items, next := releaseItems(t, e, tok, pid, "?limit=2&target_env=dev&cursor="+cursor)
		for _, it := range items {
			got = append(got, it["id"].(string))
		}
		if next == nil {
			if pages != 3 {
				t.Fatalf("pages: %d", pages)
			}
			break
		}
		cursor = next.(string)
		assertProblem(t, e.Do("GET", "/api/v1/projects/"+other+"/release-operations?limit=2&target_env=dev&cursor="+cursor, tok, nil),
			400, "invalid_cursor")
		assertProblem(t, e.Do("GET", "/api/v1/projects/"+pid+"/release-operations?limit=2&cursor="+cursor, tok, nil),
			400, "invalid_cursor")
		assertProblem(t, e.Do("GET", "/api/v1/projects?cursor="+cursor, tok, nil), 400, "invalid_cursor")
	}
	if strings.Join(got, ",") != "6,5,4,3,2" {
		t.Fatalf("pages: %v", got)
	}
	assertProblem(t, e.Do("GET", "/api/v1/projects/"+pid+"/release-operations?cursor=made-up", tok, nil), 400, "invalid_cursor")
}

func TestReleases_OperationAndReleaseOperation_AreTheSame(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	dev := deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")
	deployed(t, e, tok, pid, "app-api", "uat", "")
	prod := prodRequest(t, e, tok, pid)
	for _, op := range []map[string]any{dev, prod} {
		id := releaseID(t, op)
		viaOp := e.Do("GET", "/api/v1/operations/"+op["id"].(string), tok, nil).JSON(t)
		rel := releaseOp(t, e, tok, id)
		if rel["id"] != formatInt(id) || rel["operation_id"] != viaOp["id"] || rel["status"] != viaOp["status"] ||
			rel["created_at"] != viaOp["created_at"] || rel["updated_at"] != viaOp["updated_at"] || rel["finished_at"] != viaOp["finished_at"] {
			t.Fatalf("operation %v\nrelease operation %v", viaOp, rel)
		}
		if target := viaOp["target"].(map[string]any); viaOp["kind"] != "release_promotion" || target["type"] != "project" || target["id"] != pid {
			t.Fatalf("operation: %v", viaOp)
		}
	}
	if res := dev["result"].(map[string]any); res["version"] != "1.0.0" || res["target_env"] != "dev" || dev["finished_at"] == nil {
		t.Fatalf("dev result: %v", dev)
	}
	if p := e.Do("GET", "/api/v1/operations/"+prod["id"].(string), tok, nil).JSON(t); p["status"] != "awaiting_approval" || p["result"] != nil {
		t.Fatalf("prod: %v", p)
	}
	// A releases-read token sees both.
	read := e.Token(resources.PermReleasesRead)
	for _, path := range []string{"/api/v1/operations/" + prod["id"].(string), "/api/v1/release-operations/" + formatInt(releaseID(t, prod))} {
		if r := e.Do("GET", path, read, nil); r.Status != 200 {
			t.Fatalf("%s with releases-read: %d %s", path, r.Status, r.Body)
		}
	}
	assertProblem(t, postPromotion(e, read, pid, promotion("app-api", "dev", "2")), 403, "forbidden")
}

func TestReleases_ProdPromotion_RejectedEndsFailedWithTheReason(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	addAdmin(t, e, otherAdmin)
	inUAT(t, e, tok, pid, "1.0.0")
	op := prodRequest(t, e, tok, pid)
	id := releaseID(t, op)
	ctx := context.Background()
	if _, err := e.Store.RejectRelease(ctx, otherAdmin, id, ""); codeOf(err) != resources.CodeValidationFailed {
		t.Fatalf("rejection without a reason: %v", err)
	}
	r, err := e.Store.RejectRelease(ctx, otherAdmin, id, "not during the sale")
	if err != nil || r.Status != resources.OpFailed {
		t.Fatalf("reject: %v %v", r, err)
	}
	done := waitOperation(t, e, tok, op["id"].(string), "failed")
	if oe := done["error"].(map[string]any); oe["code"] != "release_rejected" || oe["detail"] != "not during the sale" || done["finished_at"] == nil {
		t.Fatalf("operation: %v", done)
	}
	rel := releaseOp(t, e, tok, id)
	d := rel["decision"].(map[string]any)
	if rel["status"] != "failed" || d["outcome"] != "rejected" || d["by"] != otherAdmin || d["reason"] != "not during the sale" ||
		d["note"] != nil || d["at"] == nil {
		t.Fatalf("release operation: %v", rel)
	}
	if _, err := e.Store.ApproveRelease(ctx, otherAdmin, id, "changed my mind"); codeOf(err) != resources.CodeNotAwaitingApproval {
		t.Fatalf("approve after rejection: %v", err)
	}
	if _, err := e.Store.RejectRelease(ctx, otherAdmin, id, "again"); codeOf(err) != resources.CodeNotAwaitingApproval {
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
	if _, err := e.Store.ApproveRelease(ctx, apitest.AdminEmail, id, ""); codeOf(err) != resources.CodeApprovalNoteRequired {
		t.Fatalf("the requester approved without a note: %v", err)
	}
	if rel := releaseOp(t, e, tok, id); rel["status"] != "awaiting_approval" || rel["decision"] != nil {
		t.Fatalf("after the refused approval: %v", rel)
	}
	r, err := e.Store.ApproveRelease(ctx, otherAdmin, id, "")
	if err != nil || r.Status != resources.OpPending {
		t.Fatalf("another person without a note: %v %v", r, err)
	}
	done := waitOperation(t, e, tok, op["id"].(string), "succeeded")
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
	if _, err := e.Store.ApproveRelease(ctx, otherAdmin, id, ""); codeOf(err) != resources.CodeNotAwaitingApproval {
		t.Fatalf("second approval: %v", err)
	}
	// A service account's token counts as made by whoever minted it.
	if _, err := e.Portal.CreateServiceAccount(ctx, apitest.AdminEmail, resources.NewServiceAccount{Name: "deployer",
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
	if _, err := e.Store.ApproveRelease(ctx, apitest.AdminEmail, id, ""); codeOf(err) != resources.CodeApprovalNoteRequired {
		t.Fatalf("the minter approved without a note: %v", err)
	}
	if _, err := e.Store.ApproveRelease(ctx, apitest.AdminEmail, id, "checked the diff"); err != nil {
		t.Fatalf("the minter with a note: %v", err)
	}
	waitOperation(t, e, tok, op["id"].(string), "succeeded")
}

func TestReleases_PipelineFailure_PromotionEndsFailed(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Pipeline.FailNext(1)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "3.0.0")))
	done := waitOperation(t, e, tok, op["id"].(string), "failed")
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
	eventually(t, "the dispatch failed once", func() bool {
		return count(t, e, "SELECT count(*) FROM river_job WHERE kind = 'release_promotion' AND cardinality(errors) > 0") > 0
	})
	got := e.Do("GET", "/api/v1/operations/"+op["id"].(string), tok, nil).JSON(t)
	if got["status"] != "running" && got["status"] != "pending" {
		t.Fatalf("while the pipeline is unavailable: %v", got)
	}
	if n := len(e.Pipeline.Runs()); n != 0 {
		t.Fatalf("runs while unavailable: %d", n)
	}
	e.Pipeline.SetUnavailable(false)
	waitOperation(t, e, tok, op["id"].(string), "succeeded")
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
	waitOperation(t, e, tok, dev["id"].(string), "succeeded")
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
	if _, err := e.Store.ApproveRelease(context.Background(), otherAdmin, releaseID(t, prod), "ok"); err != nil {
		t.Fatal(err)
	}
	waitOperation(t, e, tok, prod["id"].(string), "succeeded")
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
	c, err := e.Store.BookDataCopy(context.Background(), otherAdmin, parseInt(t, pid), "uat", "dev")
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
		Version: "1.0.0", By: "pipeline:manual-1", Succeeded: true}); codeOf(err) != resources.CodeReleaseOperationNotFound {
		t.Fatalf("report matching no dispatched promotion: %v", err)
	}
	if rel := releaseOp(t, e, tok, prodID); rel["status"] != "awaiting_approval" {
		t.Fatalf("prod after the reports: %v", rel)
	}
	c, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, id, "prod", "uat")
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
	waitOperation(t, e, tok, dev["id"].(string), "succeeded")
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
	done := waitOperation(t, e, tok, failing["id"].(string), "failed")
	if oe := done["error"].(map[string]any); oe["code"] != "pipeline_failed" || oe["detail"] == "" {
		t.Fatalf("failed: %v", done)
	}
}

func TestReleases_DataCopy_EnvironmentsChecked(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	ctx := context.Background()
	id := parseInt(t, pid)
	for _, c := range [][2]string{{"prod", "prod"}, {"staging", "dev"}, {"dev", "PROD"}, {"", "uat"}} {
		if _, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, id, c[0], c[1]); codeOf(err) != resources.CodeValidationFailed {
			t.Fatalf("copy %s → %s: %v", c[0], c[1], err)
		}
	}
	if _, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, 999, "prod", "dev"); codeOf(err) != resources.CodeProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	retire(t, e, tok, pid)
	if _, err := e.Store.BookDataCopy(ctx, apitest.AdminEmail, id, "prod", "dev"); codeOf(err) != resources.CodeProjectRetired {
		t.Fatalf("retired project: %v", err)
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 0 {
		t.Fatalf("copies booked: %d", n)
	}
}

package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

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
		if _, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, id, from, "prod"); codeOf(err) != resources.CodeProdLocked {
			t.Fatalf("copy %s → prod while locked: %v", from, err)
		}
	}
	if _, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, id, "prod", "uat"); err != nil {
		t.Fatalf("copy out of prod while locked: %v", err)
	}
	op := prodRequest(t, e, tok, pid)
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: apitest.AdminEmail}, releaseID(t, op), "locked data, code goes"); err != nil {
		t.Fatal(err)
	}
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	if n := count(t, e, "SELECT count(*) FROM release_operations WHERE kind = 'data_copy' AND target_env = 'prod'"); n != 0 {
		t.Fatalf("copies into prod booked: %d", n)
	}
	e.Do("PUT", path, tok, map[string]any{"locked": false, "confirm_unlock": "SHOP"})
	c, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, id, "uat", "prod")
	if err != nil || c.Status != resources.OpAwaitingOperator {
		t.Fatalf("copy into prod after unlock: %v %v", c, err)
	}
}

func TestReleases_List_NewestFirstFiltersDataCopiesIncluded(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	ctx := context.Background()
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")                                                                               // 1
	deployed(t, e, tok, pid, "www", "dev", "2.0.0")                                                                                   // 2
	deployed(t, e, tok, pid, "app-api", "uat", "")                                                                                    // 3
	prodRequest(t, e, tok, pid)                                                                                                       // 4
	if _, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, parseInt(t, pid), "prod", "uat"); err != nil { // 5
		t.Fatal(err)
	}
	e.Pipeline.FailNext(1)
	failed := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("www", "dev", "2.1.0"))) // 6
	apitest.PollOperation(t, e, tok, failed["id"].(string), "failed")
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
		"?status=failed&component=app-api": "", "?status=awaiting_operator": "5",
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
	for _, q := range []string{"?status=done", "?target_env=staging", "?component=api", "?limit=0", "?limit=201"} {
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
	if _, err := e.Store.BookDataCopy(context.Background(), resources.Actor{Label: apitest.AdminEmail}, parseInt(t, pid), "prod", "dev"); err != nil {
		t.Fatal(err)
	}
	var got []string
	cursor := ""
	for pages := 1; ; pages++ {
		items, next := releaseItems(t, e, tok, pid, "?limit=2&target_env=dev"+apitest.CursorParam(cursor))
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

func TestReleases_DataCopy_EnvironmentsChecked(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	ctx := context.Background()
	id := parseInt(t, pid)
	for _, c := range [][2]string{{"prod", "prod"}, {"staging", "dev"}, {"dev", "PROD"}, {"", "uat"}} {
		if _, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, id, c[0], c[1]); codeOf(err) != resources.CodeValidationFailed {
			t.Fatalf("copy %s → %s: %v", c[0], c[1], err)
		}
	}
	if _, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, 999, "prod", "dev"); codeOf(err) != resources.CodeProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	retire(t, e, tok, pid)
	if _, err := e.Store.BookDataCopy(ctx, resources.Actor{Label: apitest.AdminEmail}, id, "prod", "dev"); codeOf(err) != resources.CodeProjectRetired {
		t.Fatalf("retired project: %v", err)
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 0 {
		t.Fatalf("copies booked: %d", n)
	}
}

// TestProjects_ProdLocked_MemberAndFilterFollowTheLock: a project shows
// its PROD data lock (get, list, patch answer) and prod_locked=true|false
// keeps the locked or unlocked projects; unlocking clears both.
func TestProjects_ProdLocked_MemberAndFilterFollowTheLock(t *testing.T) {
	e, tok := projectEnv(t)
	locked, cid := activeProject(t, e, tok, "", nil)
	open, _ := activeProject(t, e, tok, cid, shop(cid, "short_name", "OPEN", "name", "Open shop"))
	lockPath := "/api/v1/projects/" + locked + "/prod-lock"
	if r := e.Do("PUT", lockPath, tok, map[string]any{"locked": true}); r.Status != 200 {
		t.Fatalf("lock: %d %s", r.Status, r.Body)
	}
	ids := func(query string) []string {
		t.Helper()
		var out []string
		for _, it := range e.Do("GET", "/api/v1/projects"+query, tok, nil).JSON(t)["items"].([]any) {
			p := it.(map[string]any)
			out = append(out, fmt.Sprintf("%s:%v", p["id"], p["prod_locked"]))
		}
		return out
	}
	wantAll := []string{locked + ":true", open + ":false"}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", wantAll}, {"?prod_locked=true", wantAll[:1]}, {"?prod_locked=false", wantAll[1:]},
	} {
		if diff := cmp.Diff(tc.want, ids(tc.query)); diff != "" {
			t.Errorf("GET /projects%s (-want +got):\n%s", tc.query, diff)
		}
	}
	if p := e.Do("GET", "/api/v1/projects/"+locked, tok, nil).JSON(t); p["prod_locked"] != true {
		t.Fatalf("get locked project: %v", p)
	}
	patched := e.Do("PATCH", "/api/v1/projects/"+locked, tok, map[string]any{"name": "Locked shop"},
		"Content-Type", "application/merge-patch+json").JSON(t)
	if patched["prod_locked"] != true || patched["name"] != "Locked shop" {
		t.Fatalf("patch answer: %v", patched)
	}
	e.Do("PUT", lockPath, tok, map[string]any{"locked": false, "confirm_unlock": "SHOP"})
	if diff := cmp.Diff([]string(nil), ids("?prod_locked=true")); diff != "" {
		t.Errorf("after unlock (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"?prod_locked=", "?prod_locked=yes", "?prod_locked=true&prod_locked=false"} {
		assertProblem(t, e.Do("GET", "/api/v1/projects"+bad, tok, nil), 400, "invalid_parameter")
	}
}

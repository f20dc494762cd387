package api_test

import (
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func TestProjects_Patch_MergePatchNameComponentsDomainNullable(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	path := "/api/v1/projects/" + pid
	before := getProject(t, e, tok, pid)
	r := e.Do("PATCH", path, tok, `{"name": "Web shop two", "domain": "shop.example", "components": ["www"]}`,
		"Content-Type", mergePatch, "X-Request-ID", "patch-shop-1")
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	p := r.JSON(t)
	if p["name"] != "Web shop two" || p["domain"] != "shop.example" || strings.Join(anyStrings(p["components"]), ",") != "www" ||
		p["short_name"] != "SHOP" || p["status"] != "active" || p["created_at"] != before["created_at"] || p["updated_at"] == before["updated_at"] {
		t.Fatalf("after patch: %v", p)
	}
	if got := getProject(t, e, tok, pid); got["name"] != "Web shop two" || got["domain"] != "shop.example" {
		t.Fatalf("stored: %v", got)
	}
	// Only the members sent change; null clears the nullable domain.
	p = e.Do("PATCH", path, tok, map[string]any{"domain": nil}).JSON(t)
	if v, has := p["domain"]; !has || v != nil || p["name"] != "Web shop two" {
		t.Fatalf("domain cleared: %v", p)
	}
	p = e.Do("PATCH", path, tok, map[string]any{"components": []string{"www", "app-api"}}).JSON(t)
	if strings.Join(anyStrings(p["components"]), ",") != "app-api,www" || p["domain"] != nil {
		t.Fatalf("components: %v", p)
	}
	for body, field := range map[string]string{`{"name": null}`: "name", `{"components": null}`: "components",
		`{"name": "ab"}`: "name", `{"components": ["api"]}`: "components[0]", `{"domain": ""}`: "domain",
		`{"domain": "Not A Domain"}`: "domain", `{"domain": "localhost"}`: "domain",
		`{"status": "retired"}`: "status", `{"platform": true}`: "platform"} {
		m := assertProblem(t, e.Do("PATCH", path, tok, body, "Content-Type", mergePatch), 422, "validation_failed")
		if m["field"] != field {
			t.Errorf("%s: field %v, want %s", body, m["field"], field)
		}
	}
	events := func() int {
		return count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'project.update' AND entity_id = '"+pid+"'")
	}
	if n := events(); n != 3 {
		t.Fatalf("update events: %d", n)
	}
	// A patch that changes nothing writes nothing.
	if r := e.Do("PATCH", path, tok, map[string]any{"name": "Web shop two", "short_name": "SHOP"}); r.Status != 200 {
		t.Fatalf("no-op: %d %s", r.Status, r.Body)
	}
	if n := events(); n != 3 {
		t.Fatalf("a no-op patch wrote an event: %d", n)
	}
	items, _ := auditItems(t, e, tok, "?action=project.update&entity_id="+pid)
	first := items[len(items)-1]
	if first["actor"] != apitest.AdminEmail || first["auth_kind"] != "pat" || first["token_id"] == nil ||
		first["request_id"] != "patch-shop-1" || first["before_state"].(map[string]any)["name"] != "Web shop" ||
		first["after_state"].(map[string]any)["name"] != "Web shop two" {
		t.Fatalf("update event: %v", first)
	}
}

func TestProjects_Patch_DomainOfAnotherProject_409DomainTaken(t *testing.T) {
	e, tok := projectEnv(t)
	pid, cid := activeProject(t, e, tok, "", nil)
	createProject(t, e, tok, shop(cid, "short_name", "OTHER", "domain", "other.example"))
	m := assertProblem(t, e.Do("PATCH", "/api/v1/projects/"+pid, tok, map[string]any{"domain": "other.example"}), 409, "domain_taken")
	if m["field"] != "domain" {
		t.Fatalf("field: %v", m["field"])
	}
	if p := getProject(t, e, tok, pid); p["domain"] != nil {
		t.Fatalf("domain changed: %v", p)
	}
}

func TestProjects_Patch_FrozenFields_422ImmutableFieldCurrentValueAccepted(t *testing.T) {
	e, tok := projectEnv(t)
	pid, cid := activeProject(t, e, tok, "", nil)
	b := createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))["id"].(string)
	p := getProject(t, e, tok, pid)
	path := "/api/v1/projects/" + pid
	for _, c := range []struct {
		field string
		value any
	}{{"short_name", "OTHER"}, {"kind", "vm"}, {"customer_id", b}, {"tenant_id", primaryTenant(t, e, tok, b)},
		{"short_name", nil}, {"kind", nil}, {"customer_id", nil}, {"tenant_id", nil}} {
		r := e.Do("PATCH", path, tok, map[string]any{c.field: c.value, "name": "Renamed"})
		code := "immutable_field"
		if c.value == nil {
			code = "validation_failed"
		}
		if m := assertProblem(t, r, 422, code); m["field"] != c.field {
			t.Errorf("%s=%v: field %v", c.field, c.value, m["field"])
		}
	}
	current := map[string]any{"short_name": "SHOP", "kind": "cluster", "customer_id": cid, "tenant_id": p["tenant_id"], "name": "Renamed"}
	if r := e.Do("PATCH", path, tok, current); r.Status != 200 || r.JSON(t)["name"] != "Renamed" {
		t.Fatalf("current values: %d %s", r.Status, r.Body)
	}
}

func TestProjects_Patch_Retired_409ProjectRetired(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	retire(t, e, tok, pid)
	assertProblem(t, e.Do("PATCH", "/api/v1/projects/"+pid, tok, map[string]any{"name": "Renamed"}), 409, "project_retired")
	assertProblem(t, e.Do("PATCH", "/api/v1/projects/"+pid, tok, map[string]any{"domain": nil}), 409, "project_retired")
	if p := getProject(t, e, tok, pid); p["name"] != "Web shop" || p["status"] != "retired" {
		t.Fatalf("retired project changed: %v", p)
	}
}

func TestProjects_PlatformProject_409ProjectReadOnlyToEveryWrite(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	execSQL(t, e, "UPDATE projects SET platform = true WHERE id = ?", parseInt(t, pid))
	events := count(t, e, "SELECT count(*) FROM audit_events")
	path := "/api/v1/projects/" + pid
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"name": "Renamed"}), 409, "project_read_only")
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{}), 409, "project_read_only")
	assertProblem(t, e.Do("DELETE", path, tok, nil), 409, "project_read_only")
	assertProblem(t, e.Do("PUT", path+"/prod-lock", tok, map[string]any{"locked": true}), 409, "project_read_only")
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "1.0.0")), 409, "project_read_only")
	assertProblem(t, postPromotion(e, tok, pid, promotion("app-api", "uat", "")), 409, "project_read_only")
	if n := count(t, e, "SELECT count(*) FROM audit_events"); n != events {
		t.Fatalf("refused writes left %d events", n-events)
	}
	if n := count(t, e, "SELECT count(*) FROM release_operations") + count(t, e, "SELECT count(*) FROM prod_locks"); n != 0 {
		t.Fatalf("rows written: %d", n)
	}
	// Reads work.
	if p := getProject(t, e, tok, pid); p["platform"] != true || p["status"] != "active" || p["name"] != "Web shop" {
		t.Fatalf("platform project: %v", p)
	}
	for _, sub := range []string{"/prod-lock", "/release-state", "/release-operations"} {
		if r := e.Do("GET", path+sub, tok, nil); r.Status != 200 {
			t.Fatalf("GET %s: %d %s", sub, r.Status, r.Body)
		}
	}
}

func TestProjects_Delete_WithoutAllowDestroy_403DestroyNotAllowed(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	plain := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "plain", Scopes: []string{resources.PermProjectsWrite}})
	assertProblem(t, e.Do("DELETE", "/api/v1/projects/"+pid, plain, nil), 403, "destroy_not_allowed")
	if p := getProject(t, e, tok, pid); p["status"] != "active" {
		t.Fatalf("project: %v", p)
	}
}

func TestProjects_Delete_Retires204AgainChangesNothingOneAuditEvent(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", shop("", "domain", "shop.example"))
	r := e.Do("DELETE", "/api/v1/projects/"+pid, tok, nil, "X-Request-ID", "retire-shop-1")
	if r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("retire: %d %s", r.Status, r.Body)
	}
	p := getProject(t, e, tok, pid)
	if p["status"] != "retired" || p["short_name"] != "SHOP" || p["domain"] != "shop.example" {
		t.Fatalf("retired: %v", p)
	}
	retire(t, e, tok, pid)
	items, _ := auditItems(t, e, tok, "?action=project.retire")
	if len(items) != 1 {
		t.Fatalf("retire events: %d", len(items))
	}
	ev := items[0]
	if ev["entity_id"] != pid || ev["actor"] != apitest.AdminEmail || ev["auth_kind"] != "pat" || ev["token_id"] == nil ||
		ev["request_id"] != "retire-shop-1" || ev["before_state"].(map[string]any)["status"] != "active" ||
		ev["after_state"].(map[string]any)["status"] != "retired" {
		t.Fatalf("retire event: %v", ev)
	}
	if n := count(t, e, "SELECT count(*) FROM projects"); n != 1 {
		t.Fatalf("a retired project stays: %d", n)
	}
}

func TestCustomers_Delete_CountsTheRealProject_409CustomerHasProjects(t *testing.T) {
	e, tok := projectEnv(t)
	pid, cid := activeProject(t, e, tok, "", nil)
	for range 2 {
		m := assertProblem(t, e.Do("DELETE", "/api/v1/customers/"+cid, tok, nil), 409, "customer_has_projects")
		if m["blockers"].(map[string]any)["projects"] != 1.0 {
			t.Fatalf("blockers: %v", m["blockers"])
		}
		retire(t, e, tok, pid) // a retired project still counts
	}
	if c := e.Do("GET", "/api/v1/customers/"+cid, tok, nil).JSON(t); c["status"] != "active" {
		t.Fatalf("customer: %v", c)
	}
}

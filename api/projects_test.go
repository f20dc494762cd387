package api_test

import (
	"slices"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// primaryTenant is the id of the customer's primary tenant.
func primaryTenant(t *testing.T, e *apitest.Env, tok, customerID string) string {
	t.Helper()
	for _, it := range e.Do("GET", "/api/v1/tenants?customer_id="+customerID, tok, nil).JSON(t)["items"].([]any) {
		if tn := it.(map[string]any); tn["primary"] == true {
			return tn["id"].(string)
		}
	}
	t.Fatalf("customer %s has no primary tenant", customerID)
	return ""
}

// createTenant adds a tenant to the customer and returns its id.
func createTenant(t *testing.T, e *apitest.Env, tok, customerID, slug string) string {
	t.Helper()
	r := e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": customerID, "slug": slug, "name": "Tenant " + slug})
	if r.Status != 201 {
		t.Fatalf("tenant %s: %d %s", slug, r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

func getProject(t *testing.T, e *apitest.Env, tok, pid string) map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/v1/projects/"+pid, tok, nil)
	if r.Status != 200 {
		t.Fatalf("get project %s: %d %s", pid, r.Status, r.Body)
	}
	return r.JSON(t)
}

func retire(t *testing.T, e *apitest.Env, tok, pid string) {
	t.Helper()
	if r := e.Do("DELETE", "/api/v1/projects/"+pid, tok, nil); r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("retire %s: %d %s", pid, r.Status, r.Body)
	}
}

func TestProjects_Create_202ProvisionOperationWithLocation_ThenSucceededAndActive(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	r := e.Do("POST", "/api/v1/projects", tok, shop(cid, "domain", "shop.acme.example"), "X-Request-ID", "create-shop-1")
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	op := r.JSON(t)
	id, _ := op["id"].(string)
	if id == "" || strings.HasPrefix(id, "release:") || r.Header.Get("Location") != "/api/v1/operations/"+id {
		t.Fatalf("operation id %v, Location %q", op["id"], r.Header.Get("Location"))
	}
	target := op["target"].(map[string]any)
	if op["kind"] != "project_provision" || target["type"] != "project" || target["id"] == "" || op["error"] != nil {
		t.Fatalf("operation: %v", op)
	}
	if st := op["status"].(string); !slices.Contains([]string{"pending", "running", "succeeded"}, st) {
		t.Fatalf("first status %s", st)
	}
	pid := target["id"].(string)
	done := waitOperation(t, e, tok, id, "succeeded")
	if done["finished_at"] == nil || done["error"] != nil || done["id"] != id || done["kind"] != "project_provision" {
		t.Fatalf("finished operation: %v", done)
	}
	if res := done["result"].(map[string]any); res["project_id"] != pid || res["status"] != "active" {
		t.Fatalf("result: %v", res)
	}
	p := getProject(t, e, tok, pid)
	want := map[string]any{"id": pid, "customer_id": cid, "tenant_id": primaryTenant(t, e, tok, cid), "short_name": "SHOP",
		"name": "Web shop", "kind": "cluster", "domain": "shop.acme.example", "status": "active", "platform": false}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %v, want %v", k, p[k], v)
		}
	}
	if c := anyStrings(p["components"]); strings.Join(c, ",") != "app-api,www" {
		t.Errorf("components %v, want sorted app-api,www", c)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=project&entity_id="+pid)
	if len(items) != 2 {
		t.Fatalf("project events: %v", items)
	}
	prov, create := items[0], items[1] // newest first
	if create["action"] != "project.create" || create["actor"] != apitest.AdminEmail || create["auth_kind"] != "pat" ||
		create["token_id"] == nil || create["request_id"] != "create-shop-1" || create["before_state"] != nil {
		t.Fatalf("create event: %v", create)
	}
	if prov["action"] != "project.provision" || prov["actor"] != "system" || prov["auth_kind"] != nil ||
		prov["after_state"].(map[string]any)["status"] != "active" {
		t.Fatalf("provision event: %v", prov)
	}
}

func TestProjects_Create_DefaultsToPrimaryTenantOrTakesAnotherOfTheCustomer(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	second := createTenant(t, e, tok, cid, "acme-two")
	pid, _ := createProject(t, e, tok, shop(cid, "components", []string{}))
	p := getProject(t, e, tok, pid)
	if p["tenant_id"] != primaryTenant(t, e, tok, cid) || p["domain"] != nil || len(p["components"].([]any)) != 0 {
		t.Fatalf("defaults: %v", p)
	}
	pid, _ = createProject(t, e, tok, shop(cid, "short_name", "SHOP2", "tenant_id", second, "kind", "vm"))
	if p := getProject(t, e, tok, pid); p["tenant_id"] != second || p["kind"] != "vm" {
		t.Fatalf("explicit tenant: %v", p)
	}
}

func TestProjects_Create_BodyRules_422WithFieldNothingWritten(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	cases := []struct {
		body  map[string]any
		field string
	}{
		{shop(cid, "short_name", "shop"), "short_name"}, {shop(cid, "short_name", "S"), "short_name"},
		{shop(cid, "short_name", "1SHOP"), "short_name"}, {shop(cid, "short_name", "ABCDEFGHIJKLMNOPQ"), "short_name"},
		{shop(cid, "kind", "k8s"), "kind"}, {shop(cid, "kind", nil), "kind"},
		{shop(cid, "components", []string{"api"}), "components[0]"},
		{shop(cid, "components", []string{"www", "sandbox"}), "components[1]"},
		{shop(cid, "components", []string{"www", "www"}), "components"},
		{shop(cid, "components", nil), "components"},
		{shop(cid, "name", "ab"), "name"}, {shop(cid, "name", strings.Repeat("n", 81)), "name"},
		{shop(cid, "domain", "Not A Domain"), "domain"}, {shop(cid, "domain", "localhost"), "domain"},
		{shop(cid, "customer_id", "0"), "customer_id"}, {shop(cid, "customer_id", 1), "customer_id"},
		{shop(cid, "customer_id", nil), "customer_id"}, {shop(cid, "tenant_id", "abc"), "tenant_id"},
		{shop(cid, "members", []string{"ann@example.test"}), "members"}, {shop(cid, "status", "active"), "status"},
		{shop(cid, "platform", true), "platform"},
	}
	for _, c := range cases {
		m := assertProblem(t, e.Do("POST", "/api/v1/projects", tok, c.body), 422, "validation_failed")
		if m["field"] != c.field {
			t.Errorf("%v: field %v, want %s", c.body, m["field"], c.field)
		}
	}
	if n := count(t, e, "SELECT count(*) FROM projects") + count(t, e, "SELECT count(*) FROM operations"); n != 0 {
		t.Fatalf("rows written: %d", n)
	}
	createProject(t, e, tok, shop(cid, "short_name", "ABCDEFGHIJKLMNOP", "name", strings.Repeat("n", 80), "domain", "a.b"))
}

func TestProjects_Create_UnknownCustomer_404CustomerNotFound(t *testing.T) {
	e, tok := projectEnv(t)
	assertProblem(t, e.Do("POST", "/api/v1/projects", tok, shop("999")), 404, "customer_not_found")
	if n := count(t, e, "SELECT count(*) FROM projects"); n != 0 {
		t.Fatalf("projects: %d", n)
	}
}

func TestProjects_Create_ArchivedCustomer_409CustomerArchived(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	if r := e.Do("DELETE", "/api/v1/customers/"+cid, tok, nil); r.Status != 204 {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("POST", "/api/v1/projects", tok, shop(cid)), 409, "customer_archived")
	if n := count(t, e, "SELECT count(*) FROM projects") + count(t, e, "SELECT count(*) FROM operations"); n != 0 {
		t.Fatalf("rows written: %d", n)
	}
}

func TestProjects_Create_TenantOfAnotherCustomer_422TenantNotOfCustomer(t *testing.T) {
	e, tok := projectEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	b := createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))["id"].(string)
	for _, tenant := range []string{primaryTenant(t, e, tok, b), createTenant(t, e, tok, b, "beta-two"), "999"} {
		m := assertProblem(t, e.Do("POST", "/api/v1/projects", tok, shop(a, "tenant_id", tenant)), 422, "tenant_not_of_customer")
		if m["field"] != "tenant_id" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	if n := count(t, e, "SELECT count(*) FROM projects"); n != 0 {
		t.Fatalf("projects: %d", n)
	}
}

func TestProjects_Create_ShortNameAndDomainTakenAlsoByRetired_409(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	createProject(t, e, tok, shop(cid, "short_name", "LIVE", "domain", "live.example"))
	old, _ := createProject(t, e, tok, shop(cid, "short_name", "OLD", "domain", "old.example"))
	retire(t, e, tok, old)
	for _, name := range []string{"LIVE", "OLD"} {
		m := assertProblem(t, e.Do("POST", "/api/v1/projects", tok, shop(cid, "short_name", name, "domain", "new.example")),
			409, "project_short_name_taken")
		if m["field"] != "short_name" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	for _, domain := range []string{"live.example", "old.example"} {
		m := assertProblem(t, e.Do("POST", "/api/v1/projects", tok, shop(cid, "short_name", "NEW", "domain", domain)),
			409, "domain_taken")
		if m["field"] != "domain" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	if n := count(t, e, "SELECT count(*) FROM projects"); n != 2 {
		t.Fatalf("projects: %d", n)
	}
	if n := count(t, e, "SELECT count(*) FROM operations"); n != 2 {
		t.Fatalf("operations: %d", n)
	}
}

func TestProjects_Create_IdempotentReplay_SameOperationOneProject(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	first := e.Do("POST", "/api/v1/projects", tok, shop(cid), "Idempotency-Key", "project-1")
	again := e.Do("POST", "/api/v1/projects", tok, shop(cid), "Idempotency-Key", "project-1")
	if first.Status != 202 || again.Status != 202 || string(first.Body) != string(again.Body) {
		t.Fatalf("replay: %d %d\n%s\n%s", first.Status, again.Status, first.Body, again.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Location") != first.Header.Get("Location") ||
		first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("replay headers: %v / %v", first.Header, again.Header)
	}
	assertProblem(t, e.Do("POST", "/api/v1/projects", tok, shop(cid, "name", "Other shop"), "Idempotency-Key", "project-1"),
		409, "idempotency_key_reused")
	waitOperation(t, e, tok, first.JSON(t)["id"].(string), "succeeded")
	if n := count(t, e, "SELECT count(*) FROM projects"); n != 1 {
		t.Fatalf("projects: %d", n)
	}
	if n := count(t, e, "SELECT count(*) FROM operations"); n != 1 {
		t.Fatalf("operations: %d", n)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'project.create'"); n != 1 {
		t.Fatalf("create events: %d", n)
	}
}

func TestProjects_Get_UnknownOrMalformedID_404ProjectNotFoundAnd400(t *testing.T) {
	e, tok := projectEnv(t)
	assertProblem(t, e.Do("GET", "/api/v1/projects/999", tok, nil), 404, "project_not_found")
	assertProblem(t, e.Do("PATCH", "/api/v1/projects/999", tok, map[string]any{"name": "Nothing"}), 404, "project_not_found")
	assertProblem(t, e.Do("DELETE", "/api/v1/projects/999", tok, nil), 404, "project_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/projects/0", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("GET", "/api/v1/projects/SHOP", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("GET", "/api/v1/operations/999", tok, nil), 404, "operation_not_found")
}

func TestProjects_Permissions_ReadListsWriteNeededToChange_403(t *testing.T) {
	e, tok := projectEnv(t)
	pid, cid := activeProject(t, e, tok, "", nil)
	read := e.Token(resources.PermProjectsRead)
	if r := e.Do("GET", "/api/v1/projects/"+pid, read, nil); r.Status != 200 {
		t.Fatalf("read: %d %s", r.Status, r.Body)
	}
	m := assertProblem(t, e.Do("POST", "/api/v1/projects", read, shop(cid, "short_name", "OTHER")), 403, "forbidden")
	if strings.Join(anyStrings(m["required"]), ",") != resources.PermProjectsWrite {
		t.Fatalf("required: %v", m["required"])
	}
	assertProblem(t, e.Do("PATCH", "/api/v1/projects/"+pid, read, map[string]any{"name": "Renamed"}), 403, "forbidden")
	assertProblem(t, e.Do("GET", "/api/v1/projects", e.Token(resources.PermTenancyRead), nil), 403, "forbidden")
}

func TestProjects_List_ExactFiltersCombineRetiredIncluded(t *testing.T) {
	e, tok := projectEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	b := createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))["id"].(string)
	two := createTenant(t, e, tok, a, "acme-two")
	activeProject(t, e, tok, a, shop(a, "short_name", "AONE"))
	activeProject(t, e, tok, a, shop(a, "short_name", "ATWO", "tenant_id", two, "kind", "vm"))
	activeProject(t, e, tok, b, shop(b, "short_name", "BONE"))
	gone, _ := activeProject(t, e, tok, a, shop(a, "short_name", "AOLD"))
	retire(t, e, tok, gone)
	for q, want := range map[string]string{
		"": "AONE,ATWO,BONE,AOLD", "?customer_id=" + a: "AONE,ATWO,AOLD", "?customer_id=" + b: "BONE",
		"?tenant_id=" + two: "ATWO", "?tenant_id=" + primaryTenant(t, e, tok, a): "AONE,AOLD", "?status=retired": "AOLD",
		"?status=active": "AONE,ATWO,BONE", "?status=provisioning": "", "?kind=vm": "ATWO", "?kind=cluster": "AONE,BONE,AOLD",
		"?customer_id=" + a + "&kind=cluster&status=active": "AONE", "?customer_id=" + b + "&kind=vm": "",
		"?customer_id=" + a + "&tenant_id=" + primaryTenant(t, e, tok, b): "", "?customer_id=999": "",
	} {
		r := e.Do("GET", "/api/v1/projects"+q, tok, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
		var got []string
		for _, it := range r.JSON(t)["items"].([]any) {
			got = append(got, it.(map[string]any)["short_name"].(string))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
	for _, q := range []string{"?status=gone", "?kind=k8s", "?customer_id=abc", "?tenant_id=0", "?limit=0", "?limit=201"} {
		assertProblem(t, e.Do("GET", "/api/v1/projects"+q, tok, nil), 400, "invalid_parameter")
	}
}

func TestProjects_List_CursorPagesInIDOrderBoundToFilters(t *testing.T) {
	e, tok := projectEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	var want []string
	for _, n := range []string{"PA", "PB", "PC", "PD", "PE"} {
		pid, _ := createProject(t, e, tok, shop(a, "short_name", n))
		want = append(want, pid)
	}
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		m := e.Do("GET", "/api/v1/projects?customer_id="+a+"&limit=2&cursor="+cursor, tok, nil).JSON(t)
		for _, it := range m["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if m["next_cursor"] == nil {
			if pages != 2 {
				t.Fatalf("pages: %d", pages+1)
			}
			break
		}
		cursor = m["next_cursor"].(string)
		assertProblem(t, e.Do("GET", "/api/v1/projects?limit=2&cursor="+cursor, tok, nil), 400, "invalid_cursor")
		assertProblem(t, e.Do("GET", "/api/v1/customers?cursor="+cursor, tok, nil), 400, "invalid_cursor")
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	assertProblem(t, e.Do("GET", "/api/v1/projects?cursor=made-up", tok, nil), 400, "invalid_cursor")
}

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

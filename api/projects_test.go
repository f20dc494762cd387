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
	done := apitest.PollOperation(t, e, tok, id, "succeeded")
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
	apitest.PollOperation(t, e, tok, first.JSON(t)["id"].(string), "succeeded")
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
		m := e.Do("GET", "/api/v1/projects?customer_id="+a+"&limit=2"+apitest.CursorParam(cursor), tok, nil).JSON(t)
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

package api_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTenants_CreateListReadRename(t *testing.T) {
	e, tok := customerEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	r := e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": cid, "slug": "acme-labs", "name": "Acme Labs"})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	tn := r.JSON(t)
	if tn["primary"] != false || r.Header.Get("Location") != "/api/v1/tenants/"+tn["id"].(string) {
		t.Fatalf("tenant: %v %v", tn, r.Header)
	}
	items := e.Do("GET", "/api/v1/tenants?customer_id="+cid, tok, nil).JSON(t)["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["slug"] != "acme" || items[0].(map[string]any)["primary"] != true {
		t.Fatalf("tenants of the customer: %v", items)
	}
	if got := e.Do("GET", "/api/v1/tenants?slug=acme-labs", tok, nil).JSON(t)["items"].([]any); len(got) != 1 {
		t.Fatalf("slug filter: %v", got)
	}
	path := "/api/v1/tenants/" + tn["id"].(string)
	if m := e.Do("PATCH", path, tok, map[string]any{"name": "Acme Research", "slug": "acme-labs"}).JSON(t); m["name"] != "Acme Research" {
		t.Fatalf("rename: %v", m)
	}
	m := assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"slug": "other"}), 422, "immutable_field")
	if m["field"] != "slug" {
		t.Fatalf("field: %v", m["field"])
	}
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"name": nil}), 422, "validation_failed")
	assertProblem(t, e.Do("GET", "/api/v1/tenants/999", tok, nil), 404, "tenant_not_found")
	// The primary tenant's create, this one's create and its rename.
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE entity_type = 'tenant'"); n != 3 {
		t.Fatalf("tenant events: %d", n)
	}
}

func TestTenants_Create_SlugTakenOrAnotherCustomersVCSGroup_409(t *testing.T) {
	e, tok := customerEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))
	for _, slug := range []string{"acme", "beta"} {
		m := assertProblem(t, e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": a, "slug": slug, "name": "X Y"}), 409, "slug_taken")
		if m["field"] != "slug" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	assertProblem(t, e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": "999", "slug": "free", "name": "X Y"}), 404, "customer_not_found")
	assertProblem(t, e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": a, "slug": "Bad", "name": "X Y"}), 422, "validation_failed")
}

func TestTenants_Create_ArchivedCustomer_409(t *testing.T) {
	e, tok := customerEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	e.Do("DELETE", "/api/v1/customers/"+a, tok, nil)
	assertProblem(t, e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": a, "slug": "later", "name": "Later"}), 409, "customer_archived")
}

func TestTenants_Delete_PrimaryOfLiveCustomer_409TenantIsPrimary(t *testing.T) {
	e, tok := customerEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	assertProblem(t, e.Do("DELETE", "/api/v1/tenants/1", tok, nil), 409, "tenant_is_primary")
	e.Do("DELETE", "/api/v1/customers/"+a, tok, nil)
	if r := e.Do("DELETE", "/api/v1/tenants/1", tok, nil); r.Status != 204 {
		t.Fatalf("primary tenant of an archived customer: %d %s", r.Status, r.Body)
	}
	// The slug is free as a tenant slug, but acme stays the archived customer's vcs_group.
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme("short_name", "NEW")), 409, "vcs_group_taken")
}

func TestTenants_Delete_NotEmpty_409WithBlockers(t *testing.T) {
	e, tok := customerEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	id := e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": a, "slug": "acme-two", "name": "Two"}).JSON(t)["id"].(string)
	if _, err := e.Store.DB().ExecContext(context.Background(), `INSERT INTO projects (customer_id, tenant_id, status, short_name, name, kind)
		VALUES (?, ?, 'retired', 'OLD', 'Old project', 'vm')`, a, id); err != nil {
		t.Fatal(err)
	}
	m := assertProblem(t, e.Do("DELETE", "/api/v1/tenants/"+id, tok, nil), 409, "tenant_not_empty")
	if m["blockers"].(map[string]any)["projects"] != 1.0 {
		t.Fatalf("blockers: %v", m["blockers"])
	}
	id3 := e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": a, "slug": "acme-three", "name": "Three"}).JSON(t)["id"].(string)
	if r := e.Do("DELETE", "/api/v1/tenants/"+id3, tok, nil); r.Status != 204 {
		t.Fatalf("empty tenant: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("DELETE", "/api/v1/tenants/"+id3, tok, nil), 404, "tenant_not_found")
	items, _ := auditItems(t, e, tok, "?action=tenant.delete")
	if len(items) != 1 || items[0]["after_state"] != nil || items[0]["before_state"].(map[string]any)["slug"] != "acme-three" {
		t.Fatalf("delete event: %v", items)
	}
}

func TestTenants_Create_IdempotentReplay(t *testing.T) {
	e, tok := customerEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	body := map[string]any{"customer_id": a, "slug": "acme-k", "name": "Keyed"}
	first := e.Do("POST", "/api/v1/tenants", tok, body, "Idempotency-Key", "tenant-1")
	again := e.Do("POST", "/api/v1/tenants", tok, body, "Idempotency-Key", "tenant-1")
	if first.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || string(first.Body) != string(again.Body) {
		t.Fatalf("replay: %d %d %s", first.Status, again.Status, again.Body)
	}
	if n := count(t, e, "SELECT count(*) FROM tenants WHERE slug = 'acme-k'"); n != 1 {
		t.Fatalf("tenants: %d", n)
	}
}

func TestTenants_PatchUnderArchivedCustomer_409CustomerArchived(t *testing.T) {
	e, tok := customerEnv(t)
	a := createCustomer(t, e, tok, acme())["id"].(string)
	path := "/api/v1/tenants/" + createTenant(t, e, tok, a, "acme-two")
	if r := e.Do("DELETE", "/api/v1/customers/"+a, tok, nil); r.Status != 204 {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	before := e.Do("GET", path, tok, nil).JSON(t)
	for _, body := range []map[string]any{{"name": "Renamed"}, {"name": "Tenant acme-two"}, {}} {
		assertProblem(t, e.Do("PATCH", path, tok, body), 409, "customer_archived")
		assertProblem(t, e.Do("PATCH", "/api/v1/tenants/1", tok, body), 409, "customer_archived")
	}
	if diff := cmp.Diff(before, e.Do("GET", path, tok, nil).JSON(t)); diff != "" {
		t.Fatalf("the tenant changed (-before +after):\n%s", diff)
	}
	if items, _ := auditItems(t, e, tok, "?action=tenant.update"); len(items) != 0 {
		t.Fatalf("update events: %v", items)
	}
	// Deleting an empty tenant of an archived customer, the primary one
	// included, still works.
	for _, p := range []string{path, "/api/v1/tenants/1"} {
		if r := e.Do("DELETE", p, tok, nil); r.Status != 204 {
			t.Fatalf("delete %s: %d %s", p, r.Status, r.Body)
		}
	}
}

package api_test

import (
	"context"
	"testing"

	"platformapi/resources"
)

func TestCustomers_Patch_OnlyNotesNullableEmptyStringIsAValue(t *testing.T) {
	e, tok := customerEnv(t)
	id := createCustomer(t, e, tok, acme("notes", "first"))["id"].(string)
	path := "/api/v1/customers/" + id
	mp := "application/merge-patch+json"
	if m := e.Do("PATCH", path, tok, `{"notes":""}`, "Content-Type", mp).JSON(t); m["notes"] != "" {
		t.Fatalf(`"" must be stored as a value: %v`, m["notes"])
	}
	if m := e.Do("PATCH", path, tok, `{"notes":null}`, "Content-Type", mp).JSON(t); m["notes"] != nil {
		t.Fatalf("null must clear notes: %v", m["notes"])
	}
	for _, member := range []string{"long_name", "billing_tier", "status", "primary_contact_name", "default_email_tier", "short_name"} {
		m := assertProblem(t, e.Do("PATCH", path, tok, `{"`+member+`":null}`, "Content-Type", mp), 422, "validation_failed")
		if m["field"] != member {
			t.Errorf("null %s: field %v", member, m["field"])
		}
	}
	m := e.Do("PATCH", path, tok, map[string]any{"long_name": "Acme Renamed", "billing_tier": "PAYING"}).JSON(t)
	if m["long_name"] != "Acme Renamed" || m["billing_tier"] != "PAYING" || m["short_name"] != "ACME" || m["updated_at"] == m["created_at"] {
		t.Fatalf("application/json patch: %v", m)
	}
}

func TestCustomers_PatchFrozenField_422ImmutableFieldCurrentValueAccepted(t *testing.T) {
	e, tok := customerEnv(t)
	c := createCustomer(t, e, tok, acme())
	path := "/api/v1/customers/" + c["id"].(string)
	same := map[string]any{"short_name": "ACME", "vcs_group": "acme", "edition": "sp", "customer_index": c["customer_index"]}
	if r := e.Do("PATCH", path, tok, same); r.Status != 200 {
		t.Fatalf("current values refused: %d %s", r.Status, r.Body)
	}
	for member, v := range map[string]any{"short_name": "OTHER", "vcs_group": "other", "edition": "enterprise", "customer_index": 7} {
		m := assertProblem(t, e.Do("PATCH", path, tok, map[string]any{member: v}), 422, "immutable_field")
		if m["field"] != member {
			t.Errorf("%s: field %v", member, m["field"])
		}
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'customer.update'"); n != 0 {
		t.Fatalf("no-op and refused patches must not be audited: %d", n)
	}
}

func TestCustomers_Patch_StatusRulesUnknownMemberMediaType(t *testing.T) {
	e, tok := customerEnv(t)
	path := "/api/v1/customers/" + createCustomer(t, e, tok, acme())["id"].(string)
	if m := e.Do("PATCH", path, tok, map[string]any{"status": "suspended"}).JSON(t); m["status"] != "suspended" {
		t.Fatalf("suspend: %v", m)
	}
	if m := e.Do("PATCH", path, tok, map[string]any{"status": "active"}).JSON(t); m["status"] != "active" {
		t.Fatalf("reactivate: %v", m)
	}
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"status": "archived"}), 422, "validation_failed")
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"colour": "red"}), 422, "validation_failed")
	assertProblem(t, e.Do("PATCH", path, tok, `[{"op":"replace"}]`, "Content-Type", "application/json-patch+json"), 415, "unsupported_media_type")
	m := e.Do("PATCH", path, tok, map[string]any{"primary_contact_email": " Bob <Bob@Example.ORG> "}).JSON(t)
	if m["primary_contact_email"] != "Bob@example.org" {
		t.Fatalf("normalised e-mail: %v", m["primary_contact_email"])
	}
	assertProblem(t, e.Do("PATCH", "/api/v1/customers/999", tok, map[string]any{"notes": "x"}), 404, "customer_not_found")
	items, _ := auditItems(t, e, tok, "?action=customer.update")
	if len(items) != 3 || items[0]["before_state"].(map[string]any)["primary_contact_email"] != "Jane.Doe@acme.example" {
		t.Fatalf("update events: %d %v", len(items), items)
	}
}

func TestCustomers_PatchArchived_409CustomerArchived(t *testing.T) {
	e, tok := customerEnv(t)
	path := "/api/v1/customers/" + createCustomer(t, e, tok, acme())["id"].(string)
	e.Do("DELETE", path, tok, nil)
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"notes": "x"}), 409, "customer_archived")
}

func TestCustomers_Delete_ArchivesOnceAndAgainChangesNothing(t *testing.T) {
	e, tok := customerEnv(t)
	path := "/api/v1/customers/" + createCustomer(t, e, tok, acme())["id"].(string)
	plain := e.Token(resources.PermTenancyWrite)
	assertProblem(t, e.Do("DELETE", path, plain, nil), 403, "destroy_not_allowed")
	for range 2 {
		if r := e.Do("DELETE", path, tok, nil); r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("archive: %d %s", r.Status, r.Body)
		}
	}
	if m := e.Do("GET", path, tok, nil).JSON(t); m["status"] != "archived" {
		t.Fatalf("status: %v", m["status"])
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'customer.archive'"); n != 1 {
		t.Fatalf("archive events: %d", n)
	}
	if n := count(t, e, "SELECT count(*) FROM tenants"); n != 1 {
		t.Fatalf("tenants must stay: %d", n)
	}
	assertProblem(t, e.Do("DELETE", "/api/v1/customers/999", tok, nil), 404, "customer_not_found")
}

func TestCustomers_Delete_WithProjectsRetiredIncluded_409Blockers(t *testing.T) {
	e, tok := customerEnv(t)
	path := "/api/v1/customers/" + createCustomer(t, e, tok, acme())["id"].(string)
	if _, err := e.Store.DB().ExecContext(context.Background(), `INSERT INTO projects (customer_id, tenant_id, status, short_name, name, kind)
		SELECT 1, 1, s, upper(s), 'Project ' || s, 'cluster' FROM unnest(ARRAY['active', 'retired']) s`); err != nil {
		t.Fatal(err)
	}
	m := assertProblem(t, e.Do("DELETE", path, tok, nil), 409, "customer_has_projects")
	if m["blockers"].(map[string]any)["projects"] != 2.0 {
		t.Fatalf("blockers: %v", m["blockers"])
	}
}

func TestCustomers_Delete_WhileLockedByAConcurrentChange_409Conflict(t *testing.T) {
	e, tok := customerEnv(t)
	path := "/api/v1/customers/" + createCustomer(t, e, tok, acme())["id"].(string)
	tx, err := e.Store.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(context.Background(), "SELECT 1 FROM customers WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("DELETE", path, tok, nil), 409, "conflict")
	_ = tx.Rollback()
	if r := e.Do("DELETE", path, tok, nil); r.Status != 204 {
		t.Fatalf("after the change: %d", r.Status)
	}
}

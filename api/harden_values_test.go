package api_test

import (
	"fmt"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestHarden_BodyValuesTheValidatorLetsThrough_422NamingTheMember: values
// Huma's schema validation lets through but the contract or the handler
// cannot take are 422 validation_failed naming the member, and nothing is
// written: null in a member that is not nullable (Huma skips null in
// optional members), a number with a fraction or exponent where an integer
// is wanted, an unpaired UTF-16 surrogate escape (encoding/json would store
// U+FFFD), and a member given twice.
func TestHarden_BodyValuesTheValidatorLetsThrough_422NamingTheMember(t *testing.T) {
	e, tok := customerEnv(t)
	id := createCustomer(t, e, tok, acme())["id"].(string)
	create := func(extra string) string {
		return `{"short_name":"BETA","long_name":"Beta Corp","vcs_group":"beta",` +
			`"primary_contact_email":"a@b.example","primary_contact_name":"Al"` + extra + `}`
	}
	users := e.Token(resources.PermUsersWrite, resources.PermUsersRead)
	for _, c := range []struct{ name, method, path, body, field string }{
		{"null status", "POST", "/customers", create(`,"status":null`), "status"},
		{"null billing tier", "POST", "/customers", create(`,"billing_tier":null`), "billing_tier"},
		{"null email tier", "POST", "/customers", create(`,"default_email_tier":null`), "default_email_tier"},
		{"null edition", "POST", "/customers", create(`,"edition":null`), "edition"},
		{"integer with fraction", "POST", "/customers", create(`,"default_email_tier":2.0`), "default_email_tier"},
		{"integer with exponent", "POST", "/customers", create(`,"customer_index":1e1`), "customer_index"},
		{"patch integer with fraction", "PATCH", "/customers/" + id, `{"default_email_tier":2.0}`, "default_email_tier"},
		{"patch null", "PATCH", "/customers/" + id, `{"status":null}`, "status"},
		{"lone high surrogate", "PATCH", "/customers/" + id, `{"notes":"\ud800"}`, "notes"},
		{"lone low surrogate", "PATCH", "/customers/" + id, `{"notes":"a\udc00b"}`, "notes"},
		{"high then no low", "PATCH", "/customers/" + id, `{"notes":"\ud800\u0041"}`, "notes"},
		{"member twice", "PATCH", "/customers/" + id, `{"long_name":"Abc Corp","long_name":"Def Corp"}`,
			"long_name"},
		{"null roles", "POST", "/users", `{"email":"bob@example.com","display_name":"Bob","roles":null}`,
			"roles"},
	} {
		t.Run(c.name, func(t *testing.T) {
			token := tok
			if strings.HasPrefix(c.path, "/users") {
				token = users
			}
			r := e.Do(c.method, "/api/v1"+c.path, token, c.body)
			p := assertProblem(t, r, 422, "validation_failed")
			if p["field"] != c.field || strings.Contains(string(r.Body), "Go ") {
				t.Fatalf("field %v, want %s; no Go type names: %s", p["field"], c.field, r.Body)
			}
		})
	}
	if n := len(e.Do("GET", "/api/v1/customers", tok, nil).JSON(t)["items"].([]any)); n != 1 {
		t.Fatalf("%d customers after refused creates, want 1", n)
	}
	got := e.Do("GET", "/api/v1/customers/"+id, tok, nil).JSON(t)
	if got["notes"] != nil || got["long_name"] != "Acme Corporation" || got["default_email_tier"] != 3.0 {
		t.Fatalf("a refused patch changed the customer: %v", got)
	}
	for _, ok := range []string{`{"notes":"\ud83d\ude00 and \\ud800"}`, `{"default_email_tier":2}`} {
		if r := e.Do("PATCH", "/api/v1/customers/"+id, tok, ok); r.Status != 200 {
			t.Fatalf("%s: %d %s", ok, r.Status, r.Body)
		}
	}
}

// TestHarden_BadStringInArray_FieldNamesItsIndex: "field: on 422: the first
// offending member". A string the walk refuses inside an array is named by
// its own index (components[1] for the second item), not the next one.
func TestHarden_BadStringInArray_FieldNamesItsIndex(t *testing.T) {
	e, tok := projectEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	for _, c := range []struct{ components, field string }{
		{`["\ud800"]`, "components[0]"},
		{`["www","ww\u0000w"]`, "components[1]"},
	} {
		body := `{"customer_id":"` + cid + `","short_name":"ARR","name":"Array","kind":"cluster",` +
			`"components":` + c.components + `}`
		r := e.Do("POST", "/api/v1/projects", tok, body)
		if p := assertProblem(t, r, 422, "validation_failed"); p["field"] != c.field {
			t.Fatalf("%s: field %v, want %s: %s", c.components, p["field"], c.field, r.Body)
		}
	}
}

// TestHarden_NumberBeyondFloat64_422ValidationFailedNamingTheMember: 1e400
// is valid JSON (RFC 8259 lets a server limit the range it takes), so a
// number no float64 holds is 422 validation_failed naming the member, not
// malformed_body "the body is not valid JSON", which names nothing.
func TestHarden_NumberBeyondFloat64_422ValidationFailedNamingTheMember(t *testing.T) {
	e, tok := customerEnv(t)
	id := createCustomer(t, e, tok, acme())["id"].(string)
	for _, c := range []struct{ body, field string }{
		{`{"customer_index":1e400}`, "customer_index"},
		{`{"default_email_tier":-1E999}`, "default_email_tier"},
		{`{"notes":"n","unknown":[1,2e308]}`, "unknown[1]"},
	} {
		r := e.Do("PATCH", "/api/v1/customers/"+id, tok, c.body)
		p := assertProblem(t, r, 422, "validation_failed")
		if p["field"] != c.field {
			t.Fatalf("%s: field %v, want %s: %s", c.body, p["field"], c.field, r.Body)
		}
	}
}

// TestHarden_BlankName_422NamingTheMember: a name that is only white space
// names nothing; every free-text name member refuses it (422
// validation_failed naming the member), on create and on patch alike, and
// nothing is written.
func TestHarden_BlankName_422NamingTheMember(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyWrite, resources.PermTenancyRead, resources.PermUsersWrite,
		resources.PermProjectsWrite, resources.PermAIWrite, resources.PermAIGatewayKeys)
	customer := `{"short_name":"BETA","long_name":%q,"vcs_group":"beta",` +
		`"primary_contact_email":"a@b.example","primary_contact_name":%q}`
	blank, events := "  \t ", count(t, e, "SELECT count(*) FROM audit_events")
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/customers", fmt.Sprintf(customer, blank, "Al"), "long_name"},
		{"POST", "/customers", fmt.Sprintf(customer, "Beta Corp", blank), "primary_contact_name"},
		{"PATCH", "/customers/1", `{"long_name":"   "}`, "long_name"},
		{"PATCH", "/customers/1", `{"primary_contact_name":"  "}`, "primary_contact_name"},
		{"POST", "/tenants", `{"customer_id":"1","slug":"beta-prod","name":"   "}`, "name"},
		{"PATCH", "/tenants/1", `{"name":"   "}`, "name"},
		{"POST", "/users", `{"email":"bob@example.com","display_name":" "}`, "display_name"},
		{"PATCH", "/users/1", `{"display_name":"\n\t"}`, "display_name"},
		{"PATCH", "/users/1", `{"display_name":"\u00a0\u2003"}`, "display_name"},
		{"POST", "/projects",
			`{"customer_id":"1","short_name":"WEB","name":"   ","kind":"vm","components":[]}`, "name"},
		{"PATCH", "/projects/1", `{"name":"   "}`, "name"},
		{"POST", "/ai/models", `{"repo":"org/model","display_name":"  "}`, "display_name"},
		{"PATCH", "/ai/models/1", `{"display_name":"  "}`, "display_name"},
		{"POST", "/ai/gateway/keys", `{"name":"  "}`, "name"},
		{"POST", "/ai/gateway/keys", `{"name":"ci","tier":"  "}`, "tier"},
	} {
		t.Run(c.method+" "+c.path+" "+c.field, func(t *testing.T) {
			r := e.Do(c.method, "/api/v1"+c.path, tok, c.body)
			p := assertProblem(t, r, 422, "validation_failed")
			if p["field"] != c.field || !strings.Contains(string(r.Body), "not only white space") {
				t.Fatalf("field %v, want %s: %v", p["field"], c.field, p)
			}
		})
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events"); n != events {
		t.Fatalf("%d audit events after refused writes", n-events)
	}
}

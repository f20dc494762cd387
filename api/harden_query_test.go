package api_test

import (
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// Issue 18, R2, R6, R7: a filter sent empty, a single-valued parameter sent
// twice and a query of more pairs than url.ParseQuery keeps were answered as
// if the parameter were absent (the unfiltered list, the first value, an
// unknown name let through). Each is a 400 invalid_parameter naming it.
func TestQuery_EmptyRepeatedOrTooManyParameters_400NamingTheParameter(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead, resources.PermBrandRead, resources.PermAIRead)
	many := strings.Repeat("x=1&", 10_001) + "colour=red"
	for _, c := range []struct{ name, path, field, says string }{
		{"empty id filter", "/api/v1/tenants?customer_id=", "customer_id", "must not be empty"},
		{"empty text filter", "/api/v1/customers?short_name=", "short_name", "must not be empty"},
		{"empty search", "/api/v1/ai/models?q=", "q", "must not be empty"},
		{"empty projection", "/api/v1/tenants?fields=", "fields", "must not be empty"},
		{"repeated enum", "/api/v1/brand/assets?kind=logo&kind=favicon", "kind", "given 2 times"},
		{"repeated filter", "/api/v1/tenants?slug=a&slug=b&slug=c", "slug", "given 3 times"},
		{"too many pairs", "/api/v1/tenants?" + many, "", "more than 1000 query parameters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("GET", c.path, tok, nil)
			p := assertProblem(t, r, 400, "invalid_parameter")
			if f, _ := p["field"].(string); f != c.field || !strings.Contains(string(r.Body), c.says) {
				t.Fatalf("field %q, body %s", f, r.Body)
			}
		})
	}
	if r := e.Do("GET", "/api/v1/tenants?limit=5&slug=acme", tok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// TestQuery_CursorTheListDidNotIssue_400InvalidCursor: an empty cursor (a
// client that rendered a null next_cursor as "" would read page one for
// ever) and one past the length bound were not issued by the list: 400
// invalid_cursor, like any other cursor the list did not issue.
func TestQuery_CursorTheListDidNotIssue_400InvalidCursor(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead, resources.PermAuditRead)
	for _, path := range []string{"/api/v1/tenants?cursor=&limit=5", "/api/v1/audit-events?cursor=",
		"/api/v1/tenants?cursor=" + strings.Repeat("A", 3000), "/api/v1/tenants?cursor=junk"} {
		p := assertProblem(t, e.Do("GET", path, tok, nil), 400, "invalid_cursor")
		if p["field"] != "cursor" {
			t.Fatalf("%s: field %v", path[:40], p["field"])
		}
	}
}

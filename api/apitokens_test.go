package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func TestAPITokens_ListAndReadMetadataNeverValues(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAPITokensRead)
	for range 4 {
		e.Token(resources.PermAIRead)
	}
	var ids []string
	cursor := ""
	for {
		r := e.Do("GET", "/api/v1/api-tokens?limit=2"+apitest.CursorParam(cursor), tok, nil)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "svc_pat_") || strings.Contains(string(r.Body), "hash") {
			t.Fatal("a token listing must never carry a value or hash")
		}
		m := r.JSON(t)
		for _, it := range m["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if m["next_cursor"] == nil {
			break
		}
		cursor = m["next_cursor"].(string)
	}
	if len(ids) != 5 {
		t.Fatalf("ids: %v", ids)
	}
	one := e.Do("GET", "/api/v1/api-tokens/"+ids[0], tok, nil).JSON(t)
	if one["status"] != "active" || one["owner"].(map[string]any)["kind"] != "user" || one["kind"] != "pat" {
		t.Fatalf("token: %v", one)
	}
	assertProblem(t, e.Do("GET", "/api/v1/api-tokens/99999", tok, nil), 404, "api_token_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/api-tokens/abc", tok, nil), 400, "invalid_parameter")
}

func TestAPITokens_StatusFilterSeesRevoked(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAPITokensRead)
	e.Token(resources.PermAIRead) // id 2
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, 2); err != nil {
		t.Fatal(err)
	}
	m := e.Do("GET", "/api/v1/api-tokens?status=revoked", tok, nil).JSON(t)
	items := m["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["status"] != "revoked" || items[0].(map[string]any)["id"] != "2" {
		t.Fatalf("revoked: %v", items)
	}
}

func TestServiceAccounts_ListedWithPermissions(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	if _, err := e.Portal.CreateServiceAccount(context.Background(), resources.Actor{Label: apitest.AdminEmail},
		resources.NewServiceAccount{Name: "deployer", Permissions: []string{resources.PermProjectsRead}}); err != nil {
		t.Fatal(err)
	}
	m := e.Do("GET", "/api/v1/service-accounts", e.Token(resources.PermAPITokensRead), nil).JSON(t)
	items := m["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["name"] != "deployer" {
		t.Fatalf("accounts: %v", items)
	}
}

func TestAPITokens_ServiceAccountTokenListedWithItsOwner(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	if _, err := e.Portal.CreateServiceAccount(ctx, resources.Actor{Label: apitest.AdminEmail},
		resources.NewServiceAccount{Name: "exporter", Permissions: []string{resources.PermAuditRead}}); err != nil {
		t.Fatal(err)
	}
	sa, err := e.Portal.CreateToken(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewToken{Name: "siem", Days: 30,
		Scopes: []string{resources.PermAuditRead}, ServiceAccount: "exporter"})

	if err != nil {
		t.Fatal(err)
	}
	tok := e.Token(resources.PermAPITokensRead)
	for _, path := range []string{"/api/v1/api-tokens", "/api/v1/api-tokens/" + formatInt(sa.Token.ID)} {
		r := e.Do("GET", path, tok, nil)
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	got := e.Do("GET", "/api/v1/api-tokens/"+formatInt(sa.Token.ID), tok, nil).JSON(t)["owner"]
	want := map[string]any{"kind": "service_account", "id": "1", "email": nil, "name": "exporter"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("owner (-want +got)\n%s", diff)
	}
}

// TestAPITokens_ExpiresBeforeAndOwnerInline: expires_before keeps the tokens
// expiring before the moment (with status=active: those about to expire),
// and each names its owner's e-mail and name, so "which tokens expire
// within 7 days, and whose?" is one call.
func TestAPITokens_ExpiresBeforeAndOwnerInline(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	tok := e.Token(resources.PermAPITokensRead) // 365 days
	for _, days := range []int{3, 30} {
		if _, err := e.Portal.CreateToken(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewToken{Name: fmt.Sprint("d", days),
			Days: days, Scopes: []string{resources.PermAuditRead}}); err != nil {
			t.Fatal(err)
		}
	}
	week := url.QueryEscape(time.Now().Add(7 * 24 * time.Hour).UTC().Format(time.RFC3339))
	type row struct{ Name, Email, Owner string }
	list := func(query string) []row {
		var out []row
		for _, it := range e.Do("GET", "/api/v1/api-tokens"+query, tok, nil).JSON(t)["items"].([]any) {
			m := it.(map[string]any)
			o := m["owner"].(map[string]any)
			out = append(out, row{m["name"].(string), fmt.Sprint(o["email"]), o["name"].(string)})
		}
		return out
	}
	admin := func(name string) row { return row{name, apitest.AdminEmail, "Admin"} }
	for _, tc := range []struct {
		query string
		want  []row
	}{
		{"?expires_before=" + week, []row{admin("d3")}},
		{"?status=active&expires_before=" + week, []row{admin("d3")}},
		{"?expires_before=" + url.QueryEscape(time.Now().Add(60*24*time.Hour).UTC().Format(time.RFC3339)),
			[]row{admin("d3"), admin("d30")}},
		{"", []row{admin("test"), admin("d3"), admin("d30")}},
	} {
		if diff := cmp.Diff(tc.want, list(tc.query)); diff != "" {
			t.Errorf("GET /api-tokens%s (-want +got):\n%s", tc.query, diff)
		}
	}
	for _, bad := range []string{"?expires_before=", "?expires_before=tomorrow", "?expires_before=2026-13-01T00:00:00Z"} {
		assertProblem(t, e.Do("GET", "/api/v1/api-tokens"+bad, tok, nil), 400, "invalid_parameter")
	}
}

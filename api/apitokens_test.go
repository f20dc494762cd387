package api_test

import (
	"context"
	"github.com/google/go-cmp/cmp"
	"net/url"
	"strings"
	"testing"

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
		r := e.Do("GET", "/api/v1/api-tokens?limit=2&cursor="+url.QueryEscape(cursor), tok, nil)
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
	if _, err := e.Portal.RevokeToken(context.Background(), apitest.AdminEmail, 2); err != nil {
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
	if _, err := e.Portal.CreateServiceAccount(context.Background(), apitest.AdminEmail,
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
	if _, err := e.Portal.CreateServiceAccount(ctx, apitest.AdminEmail,
		resources.NewServiceAccount{Name: "exporter", Permissions: []string{resources.PermAuditRead}}); err != nil {
		t.Fatal(err)
	}
	sa, err := e.Portal.CreateToken(ctx, apitest.AdminEmail, resources.NewToken{Name: "siem", Days: 30,
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
	if diff := cmp.Diff(map[string]any{"kind": "service_account", "id": "1"}, got); diff != "" {
		t.Fatalf("owner (-want +got)\n%s", diff)
	}
}

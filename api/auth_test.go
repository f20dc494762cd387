package api_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func assertProblem(t *testing.T, r *apitest.Response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q", ct)
	}
	m := r.JSON(t)
	if m["code"] != code || m["type"] != "urn:svc:api:problem:"+code || int(m["status"].(float64)) != status {
		t.Fatalf("problem %v, want code %s", m, code)
	}
	if m["request_id"] != r.Header.Get("X-Request-ID") || m["request_id"] == "" || m["title"] == "" || m["instance"] == "" {
		t.Fatalf("problem members: %v", m)
	}
	if status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate Bearer: %v", r.Header)
	}
	return m
}

func TestAuth_NoBearer_401NotAuthenticated(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	assertProblem(t, e.Do("GET", "/api/v1/whoami", "", nil), 401, "not_authenticated")
	assertProblem(t, e.Do("GET", "/api/v1/whoami", "", nil, "Authorization", "Basic YTpi"), 401, "not_authenticated")
}

func TestAuth_ChecksumTypo_401TokenInvalidWithoutLookup(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAIRead)
	last := tok[len(tok)-1]
	typo := tok[:len(tok)-1] + map[bool]string{true: "A", false: "B"}[last != 'A']
	before := e.Lookups.Count()
	assertProblem(t, e.Do("GET", "/api/v1/whoami", typo, nil), 401, "token_invalid")
	assertProblem(t, e.Do("GET", "/api/v1/whoami", "svc_pat_short", nil), 401, "token_invalid")
	if n := e.Lookups.Count() - before; n != 0 {
		t.Fatalf("malformed tokens reached the store %d times", n)
	}
}

func TestAuth_UnknownWellFormedToken_401TokenInvalid(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	before := e.Lookups.Count()
	assertProblem(t, e.Do("GET", "/api/v1/whoami", resources.NewTokenValue("pat"), nil), 401, "token_invalid")
	if e.Lookups.Count()-before != 1 {
		t.Fatal("a well-formed token must be looked up once")
	}
}

func TestAuth_Expired_401TokenExpired(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "short", Scopes: []string{resources.PermAIRead}, Days: 1})
	if r := e.Do("GET", "/api/v1/whoami", tok, nil); r.Status != 200 {
		t.Fatalf("fresh token: %d", r.Status)
	}
	e.Clock.Advance(25 * time.Hour)
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_expired")
}

func TestAuth_RevokedOnTheNextRequest_401TokenRevoked(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAIRead)
	who := e.Do("GET", "/api/v1/whoami", tok, nil).JSON(t)
	id := who["token"].(map[string]any)["id"].(string)
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, parseInt(t, id)); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_revoked")
}

func TestAuth_ServiceAccountDisabled_401PrincipalDisabled(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	if _, err := e.Portal.CreateServiceAccount(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewServiceAccount{Name: "ci-bot",
		Permissions: []string{resources.PermAIRead}}); err != nil {
		t.Fatal(err)
	}
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "bot", Scopes: []string{resources.PermAIRead}, ServiceAccount: "ci-bot"})
	if !strings.HasPrefix(tok, "svc_sat_") {
		t.Fatalf("service-account token prefix: %s", tok[:8])
	}
	m := e.Do("GET", "/api/v1/whoami", tok, nil).JSON(t)
	if m["auth_kind"] != "service_account" || m["principal"].(map[string]any)["kind"] != "service_account" {
		t.Fatalf("whoami: %v", m)
	}
	if _, err := e.Store.DB().ExecContext(ctx, "UPDATE service_accounts SET status = 'disabled'"); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "principal_disabled")
}

func TestAuth_OutsideAllowedIPs_401TokenIPNotAllowed(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	far := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "far", Scopes: []string{resources.PermAIRead},
		AllowedIPs: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	assertProblem(t, e.Do("GET", "/api/v1/whoami", far, nil), 401, "token_ip_not_allowed")
	near := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "near", Scopes: []string{resources.PermAIRead},
		AllowedIPs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if r := e.Do("GET", "/api/v1/whoami", near, nil); r.Status != 200 {
		t.Fatalf("allowed address refused: %d %s", r.Status, r.Body)
	}
}

func TestAuth_NoPepper_503ApiTokensUnconfigured(t *testing.T) {
	e := apitest.New(t, apitest.Options{Pepper: apitest.Unconfigured})
	r := e.Do("GET", "/api/v1/whoami", "svc_pat_whatever", nil)
	p := assertProblem(t, r, 503, "api_tokens_unconfigured")
	for _, where := range []string{"PLATFORMAPI_TOKEN_PEPPER", "--token-pepper-file"} {
		if !strings.Contains(p["detail"].(string), where) {
			t.Errorf("the detail does not say where the pepper is set (%s): %v", where, p["detail"])
		}
	}
	if r.Header.Get("Retry-After") != "" {
		t.Fatal("an operator must act: no Retry-After")
	}
}

func TestAuth_MissingScope_403ForbiddenWithRequired(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	m := assertProblem(t, e.Do("GET", "/api/v1/audit-events", e.Token(resources.PermAIRead), nil), 403, "forbidden")
	req := m["required"].([]any)
	if len(req) != 1 || req[0] != resources.PermAuditRead {
		t.Fatalf("required: %v", req)
	}
}

// TestAuth_Forbidden_DetailAndRemedyNameTheKeys: a 403 forbidden names the
// keys in its detail ("any one of" when several would each do) and says
// what to ask for in its remedy.
func TestAuth_Forbidden_DetailAndRemedyNameTheKeys(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAIRead)
	for _, tc := range []struct {
		path string
		want map[string]any
	}{
		{"/api/v1/audit-events", map[string]any{"required": []any{"audit-read-global"},
			"detail": "this needs the permission key audit-read-global; it is not among the token's " +
				"effective scopes",
			"remedy": "Ask an administrator for a token with audit-read-global."}},
		{"/api/v1/projects/1/release-state", map[string]any{
			"required": []any{"releases-read-global", "releases-write-global"},
			"detail": "this needs any one of: releases-read-global, releases-write-global; none is among " +
				"the token's effective scopes",
			"remedy": "Ask an administrator for a token with any one of: releases-read-global, " +
				"releases-write-global."}},
	} {
		m := assertProblem(t, e.Do("GET", tc.path, tok, nil), 403, "forbidden")
		got := map[string]any{"required": m["required"], "detail": m["detail"], "remedy": m["remedy"]}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, d)
		}
	}
}

func TestAuth_ScopeIntersectsOwnerRolesNow(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: "auditor", Permissions: []string{resources.PermAuditRead}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.CreateUser(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewUser{Email: "ann@example.test", DisplayName: "Ann", Roles: []string{"auditor"}}); err != nil {
		t.Fatal(err)
	}
	// Admin mints for itself; Ann's token must come from Ann, who lacks
	// api-tokens-admin-global, so the admin makes Ann able to mint first.
	if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: "minter", Permissions: []string{resources.PermAPITokensAdmin}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.GrantRole(ctx, resources.Actor{Label: apitest.AdminEmail}, "ann@example.test", "minter"); err != nil {
		t.Fatal(err)
	}
	tok := e.TokenFor("ann@example.test", resources.NewToken{Name: "ann", Scopes: []string{resources.PermAuditRead}})
	if r := e.Do("GET", "/api/v1/audit-events", tok, nil); r.Status != 200 {
		t.Fatalf("with role: %d %s", r.Status, r.Body)
	}
	if _, err := e.Portal.RevokeRole(ctx, resources.Actor{Label: apitest.AdminEmail}, "ann@example.test", "auditor"); err != nil {
		t.Fatal(err)
	}
	m := assertProblem(t, e.Do("GET", "/api/v1/audit-events", tok, nil), 403, "forbidden")
	want := "The token carries audit-read-global but its owner (ann@example.test) no longer " +
		"holds it: ask an administrator to give the owner a role with audit-read-global."
	if m["remedy"] != want {
		t.Fatalf("remedy %q, want %q", m["remedy"], want)
	}
	scopes := e.Do("GET", "/api/v1/whoami", tok, nil).JSON(t)["scopes"].([]any)
	if len(scopes) != 0 {
		t.Fatalf("effective scopes after role removal: %v", scopes)
	}
}

func TestAuth_LastUsedKeptWithoutAWritePerRequest(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAPITokensRead)
	id := e.Do("GET", "/api/v1/whoami", tok, nil).JSON(t)["token"].(map[string]any)["id"].(string)
	first := lastUsed(t, e, id)
	if first.IsZero() {
		t.Fatal("last_used_at not recorded")
	}
	e.Clock.Advance(10 * time.Second)
	e.Do("GET", "/api/v1/whoami", tok, nil)
	if got := lastUsed(t, e, id); !got.Equal(first) {
		t.Fatalf("written again within a minute: %v → %v", first, got)
	}
	e.Clock.Advance(2 * time.Minute)
	e.Do("GET", "/api/v1/whoami", tok, nil)
	if got := lastUsed(t, e, id); !got.After(first) {
		t.Fatalf("not refreshed after a minute: %v → %v", first, got)
	}
}

func lastUsed(t *testing.T, e *apitest.Env, id string) time.Time {
	t.Helper()
	var at *time.Time
	if err := e.Store.DB().NewRaw("SELECT last_used_at FROM api_tokens WHERE id = ?", id).Scan(context.Background(), &at); err != nil {
		t.Fatal(err)
	}
	if at == nil {
		return time.Time{}
	}
	return *at
}

// TestAuth_AuthorizationSentTwice_401TokenInvalid: Authorization carries one
// credential (RFC 9110); sent twice it is refused whichever comes first,
// instead of silently using the first.
func TestAuth_AuthorizationSentTwice_401TokenInvalid(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead)
	for _, pair := range [][2]string{{tok, "junk"}, {"junk", tok}, {tok, tok}} {
		res, body := getWithTwoCredentials(t, e, "/api/v1/whoami", pair)
		if res.StatusCode != 401 || !strings.Contains(body, `"code":"token_invalid"`) ||
			!strings.Contains(body, "one Authorization header") {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
	}
}

// getWithTwoCredentials GETs path with two Authorization headers, Bearer
// pair[0] then Bearer pair[1], and answers the response and its body.
func getWithTwoCredentials(t *testing.T, e *apitest.Env, path string,
	pair [2]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.HTTP.URL+path, nil)
	req.Header.Add("Authorization", "Bearer "+pair[0])
	req.Header.Add("Authorization", "Bearer "+pair[1])
	res, err := e.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res, string(body)
}

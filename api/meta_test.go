package api_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

func TestWhoami_ReportsPrincipalTokenAndEffectiveScopes(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAuditRead, resources.PermAIRead)
	r := e.Do("GET", "/api/v1/whoami", tok, nil)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	p := m["principal"].(map[string]any)
	if p["kind"] != "user" || p["email"] != apitest.AdminEmail || m["auth_kind"] != "pat" {
		t.Fatalf("principal: %v", m)
	}
	scopes := m["scopes"].([]any)
	if len(scopes) != 2 || scopes[0] != resources.PermAIRead || scopes[1] != resources.PermAuditRead {
		t.Fatalf("scopes: %v", scopes)
	}
	tk := m["token"].(map[string]any)
	if tk["allow_destroy"] != false || tk["expires_at"] == nil || tk["name"] != "test" {
		t.Fatalf("token: %v", tk)
	}
}

// TestWhoami_NowIsTheServerClock_RateLimitAsTheHeadersOfTheSameAnswer:
// now is the server's clock (frozen in tests, then moved); rate_limit is
// the budget after this request's own unit, as its RateLimit-* headers
// say; the budget's clock is the server's too (moved on, it refilled).
func TestWhoami_NowIsTheServerClock_RateLimitAsTheHeadersOfTheSameAnswer(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAuditRead)
	for _, step := range []struct {
		advance   time.Duration
		remaining int
	}{{0, 599}, {0, 598}, {0, 597}, {49 * time.Hour, 599}} {
		e.Clock.Advance(step.advance)
		r := e.Do("GET", "/api/v1/whoami", tok, nil)
		var got struct {
			Now       time.Time      `json:"now"`
			RateLimit api.RateStatus `json:"rate_limit"`
		}
		if err := json.Unmarshal(r.Body, &got); err != nil || r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		want := api.RateStatus{Limit: api.RatePerMinute, Remaining: step.remaining, ResetSeconds: 1}
		if d := cmp.Diff(want, got.RateLimit); d != "" || !got.Now.Equal(e.Clock.Now()) {
			t.Fatalf("now %v (clock %v); rate_limit (-want +got):\n%s", got.Now, e.Clock.Now(), d)
		}
		headers := []string{r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining")}
		fromBody := []string{strconv.Itoa(want.Limit), strconv.Itoa(want.Remaining)}
		if d := cmp.Diff(fromBody, headers); d != "" {
			t.Fatalf("headers (-body +headers):\n%s", d)
		}
	}
}

func TestMeta_Versions(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	m := e.Do("GET", "/api/v1/meta", e.Token(resources.PermAIRead), nil).JSON(t)
	if m["api_version"] != "1.0.0" || m["platform_version"] != "1.0.187" {
		t.Fatalf("meta: %v", m)
	}
}

func TestPermissions_EveryKeyWithTokenAllowed(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	m := e.Do("GET", "/api/v1/permissions", e.Token(resources.PermAIRead), nil).JSON(t)
	items := m["items"].([]any)
	if len(items) != len(resources.Permissions()) || m["next_cursor"] != nil {
		t.Fatalf("items %d, want %d; %v", len(items), len(resources.Permissions()), m["next_cursor"])
	}
	allowed := map[string]bool{}
	var keys []string
	for _, it := range items {
		it := it.(map[string]any)
		allowed[it["key"].(string)] = it["token_allowed"].(bool)
		keys = append(keys, it["key"].(string))
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("not sorted: %v", keys)
	}
	for _, k := range []string{"admin", "founder", "ssh-console"} {
		if allowed[k] {
			t.Fatalf("%s must not be token_allowed", k)
		}
	}
	if !allowed[resources.PermProjectsRead] {
		t.Fatal("projects-read-global must be token_allowed")
	}
}

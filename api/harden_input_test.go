package api_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// problemField asserts a problem's status and code and returns its field.
func problemField(t *testing.T, r *apitest.Response, status int, code string) string {
	t.Helper()
	f, _ := assertProblem(t, r, status, code)["field"].(string)
	return f
}

func TestHarden_NULInQueryPathOrBody_400Or422NamingTheMember(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead, resources.PermTenancyWrite, resources.PermAIRead, resources.PermUsersRead)
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"query filter", "GET", "/api/v1/customers?short_name=A%00B", nil, 400, "invalid_parameter", "short_name"},
		{"query email filter", "GET", "/api/v1/users?email=a%00@b.example", nil, 400, "invalid_parameter", "email"},
		{"path parameter", "GET", "/api/v1/ai/nodes/gpu%00one", nil, 400, "invalid_parameter", "hostname"},
		{"body member", "POST", "/api/v1/customers", `{"short_name":"ACME","long_name":"Acme\u0000Corp","vcs_group":"acme",` +
			`"primary_contact_email":"a@b.example","primary_contact_name":"Jane"}`, 422, "validation_failed", "long_name"},
		{"tenant slug filter", "GET", "/api/v1/tenants?slug=a%00", nil, 400, "invalid_parameter", "slug"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := problemField(t, e.Do(c.method, c.path, tok, c.body), c.status, c.code); got != c.field {
				t.Fatalf("field %q, want %q", got, c.field)
			}
		})
	}
}

func TestHarden_ArrayItemOfWrongType_422NoPanicKeyNotLocked(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermUsersWrite, resources.PermUsersRead, resources.PermProjectsWrite)
	for _, c := range []struct {
		name, path, body, field string
	}{
		{"roles [[]]", "/api/v1/users", `{"email":"x@y.example","display_name":"X Y","roles":[[]]}`, "roles[0]"},
		{"roles [{}]", "/api/v1/users", `{"email":"x@y.example","display_name":"X Y","roles":["a",{}]}`, "roles[1]"},
		{"components [{}]", "/api/v1/projects", `{"customer_id":"1","short_name":"SHOP","name":"Shop","kind":"cluster",` +
			`"components":[{}]}`, "components[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := "k-" + strings.ReplaceAll(c.name, " ", "")
			if got := problemField(t, e.Do("POST", c.path, tok, c.body, "Idempotency-Key", key), 422, "validation_failed"); got != c.field {
				t.Fatalf("field %q, want %q", got, c.field)
			}
			// The refusal came before the key was taken: the key stays free.
			if again := e.Do("POST", c.path, tok, `{}`, "Idempotency-Key", key); again.Status != 422 ||
				again.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("again: %d %v %s", again.Status, again.Header, again.Body)
			}
		})
	}
	if strings.Contains(e.LogText(), "panic") {
		t.Fatalf("a panic was logged:\n%s", e.LogText())
	}
}

func TestHarden_ListAPITokensWithServiceAccountToken_200(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	if _, err := e.Portal.CreateServiceAccount(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewServiceAccount{Name: "bot",
		Permissions: []string{resources.PermAIRead}}); err != nil {
		t.Fatal(err)
	}
	e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "b", Scopes: []string{resources.PermAIRead}, ServiceAccount: "bot"})
	tok := e.Token(resources.PermAPITokensRead)
	r := e.Do("GET", "/api/v1/api-tokens", tok, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var kinds []string
	for _, it := range r.JSON(t)["items"].([]any) {
		kinds = append(kinds, it.(map[string]any)["owner"].(map[string]any)["kind"].(string))
	}
	if d := cmp.Diff([]string{"service_account", "user"}, sortedCopy(kinds)); d != "" {
		t.Fatalf("owner kinds (-want +got):\n%s", d)
	}
}

func TestHarden_InvalidJSONBody_422MalformedBody(t *testing.T) {
	e, tok := customerEnv(t)
	for _, body := range []string{``, ` `, `{`, `{"short_name":}`, `[1,2`, `{"a":1}{}`, `nope`} {
		t.Run(body, func(t *testing.T) {
			assertProblem(t, e.Do("POST", "/api/v1/customers", tok, body), 422, "malformed_body")
			assertProblem(t, e.Do("POST", "/api/v1/customers", tok, body, "Idempotency-Key", "m-"+body), 422, "malformed_body")
		})
	}
}

func TestHarden_BadPercentEncodingInQuery_400(t *testing.T) {
	e, tok := customerEnv(t)
	createCustomer(t, e, tok, acme())
	for _, c := range []struct{ query, field string }{
		{"short_name=%zz", "short_name"},
		{"short_name=ACME%", "short_name"},
		{"short_name=ACME;status=active", "short_name"},
		{"limit=1&short_name=%FF", "short_name"},
	} {
		t.Run(c.query, func(t *testing.T) {
			if got := problemField(t, e.Do("GET", "/api/v1/customers?"+c.query, tok, nil), 400, "invalid_parameter"); got != c.field {
				t.Fatalf("field %q, want %q", got, c.field)
			}
		})
	}
}

func TestHarden_InvalidUTF8InBody_422NeverStored(t *testing.T) {
	e, tok := customerEnv(t)
	body := "{\"short_name\":\"ACME\",\"long_name\":\"Acme \xff Corp\",\"vcs_group\":\"acme\"," +
		"\"primary_contact_email\":\"a@b.example\",\"primary_contact_name\":\"Jane\"}"
	if got := problemField(t, e.Do("POST", "/api/v1/customers", tok, body), 422, "validation_failed"); got != "long_name" {
		t.Fatalf("field %q", got)
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 0 {
		t.Fatalf("customers stored: %d", n)
	}
}

func TestHarden_IdempotencyInProgress_RetryAfterOneSecond(t *testing.T) {
	faulty := &finishFails{fail: true}
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		faulty.Idempotency = st
		return faulty
	}})
	tok := e.Token(resources.PermTenancyWrite)
	e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "busy")
	r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "busy")
	assertProblem(t, r, 429, "idempotency_request_in_progress")
	if ra := r.Header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q, want 1", ra)
	}
}

func TestHarden_OperationsReleaseID_SamePermissionAsReleaseOperations(t *testing.T) {
	e, tok := releaseEnv(t)
	pid := shopProject(t, e, tok)
	op := promote(t, e, tok, pid, map[string]any{"component": "www", "target_env": "dev", "version": "1.0.0"})
	id := strings.TrimPrefix(op["id"].(string), "release:")
	projectsOnly := e.Token(resources.PermProjectsRead)
	assertProblem(t, e.Do("GET", "/api/v1/release-operations/"+id, projectsOnly, nil), 403, "forbidden")
	m := assertProblem(t, e.Do("GET", "/api/v1/operations/release:"+id, projectsOnly, nil), 403, "forbidden")
	if d := cmp.Diff([]any{resources.PermReleasesRead, resources.PermReleasesWrite}, sortedAny(m["required"])); d != "" {
		t.Fatalf("required (-want +got):\n%s", d)
	}
	if r := e.Do("GET", "/api/v1/operations/release:"+id, e.Token(resources.PermReleasesRead), nil); r.Status != 200 {
		t.Fatalf("releases reader: %d %s", r.Status, r.Body)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func sortedAny(v any) []any {
	s, _ := v.([]any)
	out := slices.Clone(s)
	slices.SortFunc(out, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

// panickyCodeHost panics once in EnsureGroup, as a bug in a handler would.
type panickyCodeHost struct {
	resources.CodeHost
	panicked atomic.Bool
}

func (p *panickyCodeHost) EnsureGroup(ctx context.Context, path, name string) (*resources.VCSGroup, error) {
	if p.panicked.CompareAndSwap(false, true) {
		panic("injected panic inside a keyed request")
	}
	return p.CodeHost.EnsureGroup(ctx, path, name)
}

func TestHarden_PanicInsideKeyedRequest_500AndKeyReleased(t *testing.T) {
	e := apitest.New(t, apitest.Options{CodeHost: func(c resources.CodeHost) resources.CodeHost {
		return &panickyCodeHost{CodeHost: c}
	}})
	tok := e.Token(resources.PermTenancyWrite)
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "boom"), 500, "internal")
	retry := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "boom")
	if retry.Status != 201 || retry.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after the panic: %d %s", retry.Status, retry.Body)
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 1 {
		t.Fatalf("customers: %d", n)
	}
}

func TestHarden_LookAlikeEmail_RefusedForUsersContactsAndFilters(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermUsersWrite, resources.PermUsersRead, resources.PermTenancyWrite)
	for _, email := range []string{"ad\u200bmin@example.test", "\u202enimda@example.test", "\uff41dmin@example.test",
		"\u0430dmin@example.test"} {
		t.Run(email, func(t *testing.T) {
			r := e.Do("POST", "/api/v1/users", tok, map[string]any{"email": email, "display_name": "Look Alike"})
			if f := problemField(t, r, 422, "validation_failed"); f != "email" {
				t.Fatalf("user field %q", f)
			}
			r = e.Do("POST", "/api/v1/customers", tok, acme("primary_contact_email", email))
			if f := problemField(t, r, 422, "validation_failed"); f != "primary_contact_email" {
				t.Fatalf("contact field %q", f)
			}
			r = e.Do("GET", "/api/v1/users?email="+url.QueryEscape(email), tok, nil)
			if f := problemField(t, r, 400, "invalid_parameter"); f != "email" {
				t.Fatalf("filter field %q", f)
			}
		})
	}
}

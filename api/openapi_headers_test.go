package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// declaredHeaders reads, per operation id and status, the response headers
// the served document declares.
func declaredHeaders(t *testing.T, e *apitest.Env) map[string]map[string][]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]struct {
				Headers map[string]json.RawMessage `json:"headers"`
			} `json:"responses"`
		}
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	for _, ops := range doc.Paths {
		for _, op := range ops {
			out[op.OperationID] = map[string][]string{}
			for status, r := range op.Responses {
				for name := range r.Headers {
					out[op.OperationID][status] = append(out[op.OperationID][status], http.CanonicalHeaderKey(name))
				}
			}
		}
	}
	return out
}

// transportHeaders are set by net/http, not by the API.
var transportHeaders = []string{"Content-Type", "Content-Length", "Date", "Transfer-Encoding"}

// TestOpenAPI_EveryHeaderSentIsDeclared sends requests that draw each shared
// header (success, 304, 401, 403, 404, 412, 415, 422, 429, an idempotent replay) and
// checks that every header of each answer is declared for its operation
// and status.
func TestOpenAPI_EveryHeaderSentIsDeclared(t *testing.T) {
	e := apitest.New(t, apitest.Options{Limiter: api.NewLocalLimiter(8, nil)})
	declared := declaredHeaders(t, e)
	tok := e.Token(resources.PermTenancyWrite)
	reader := e.Token(resources.PermAIRead)
	brand := e.Token(resources.PermBrandWrite)
	cases := []struct {
		op     string
		status int
		send   func() *apitest.Response
	}{
		{"get-whoami", 200, func() *apitest.Response { return e.Do("GET", "/api/v1/whoami", tok, nil) }},
		{"get-whoami", 401, func() *apitest.Response { return e.Do("GET", "/api/v1/whoami", "svc_pat_bad", nil) }},
		{"list-customers", 403, func() *apitest.Response { return e.Do("GET", "/api/v1/customers", reader, nil) }},
		{"get-customer", 404, func() *apitest.Response { return e.Do("GET", "/api/v1/customers/999", tok, nil) }},
		{"create-customer", 415, func() *apitest.Response {
			return e.Do("POST", "/api/v1/customers", tok, "x", "Content-Type", "text/plain")
		}},
		{"create-customer", 422, func() *apitest.Response { return e.Do("POST", "/api/v1/customers", tok, map[string]any{}) }},
		{"create-customer", 201, func() *apitest.Response {
			return e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "h1")
		}},
		{"create-customer", 201, func() *apitest.Response { // the replay
			return e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "h1")
		}},
		{"get-brand", 304, func() *apitest.Response {
			return e.Do("GET", "/api/v1/brand", brand, nil, "If-None-Match", `"1"`)
		}},
		{"replace-brand", 412, func() *apitest.Response {
			body := map[string]any{"brand_color": "#000000", "logo_asset_id": nil, "favicon_asset_id": nil}
			return e.Do("PUT", "/api/v1/brand", brand, body, "If-Match", `"7"`)
		}},
		{"get-meta", 429, func() *apitest.Response {
			for range 8 {
				e.Do("GET", "/api/v1/meta", reader, nil)
			}
			return e.Do("GET", "/api/v1/meta", reader, nil)
		}},
	}
	for _, c := range cases {
		r := c.send()
		if r.Status != c.status {
			t.Fatalf("%s: %d, want %d: %s", c.op, r.Status, c.status, r.Body)
		}
		status := formatInt(int64(c.status))
		for name := range r.Header {
			if !slices.Contains(transportHeaders, name) && !slices.Contains(declared[c.op][status], name) {
				t.Errorf("%s %d sends %s, undeclared (declared: %v)", c.op, c.status, name, declared[c.op][status])
			}
		}
	}
}

// TestOpenAPI_PatternDescriptionIsAnExtension_MessageKept: no OpenAPI tool
// knows Huma's patternDescription keyword, so the document carries it as
// x-pattern-description; the validation message still uses it.
func TestOpenAPI_PatternDescriptionIsAnExtension_MessageKept(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	doc := string(e.Do("GET", "/api/v1/openapi.json", "", nil).Body)
	if strings.Contains(doc, `"patternDescription"`) || !strings.Contains(doc, `"x-pattern-description":"org/name`) {
		t.Fatal("patternDescription is not carried as x-pattern-description")
	}
	tok := e.Token(resources.PermAIWrite)
	r := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "no..slash"})
	p := assertProblem(t, r, 422, "validation_failed")
	if msg, _ := json.Marshal(p["errors"]); !strings.Contains(string(msg), "org/name") {
		t.Fatalf("message without the pattern's description: %s", msg)
	}
}

// TestOpenAPI_InputLimitsImpliedByPatternsAndEnums: an anchored, bounded
// pattern states its maxLength and an integer enum its range.
func TestOpenAPI_InputLimitsImpliedByPatternsAndEnums(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string
				Schema map[string]any
			}
		}
		Components struct {
			Schemas map[string]struct{ Properties map[string]map[string]any }
		}
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	id := doc.Paths["/customers/{customer_id}"]["get"].Parameters[0].Schema
	tier := doc.Components.Schemas["CustomerCreate"].Properties["default_email_tier"]
	op := doc.Paths["/operations/{operation_id}"]["get"].Parameters[0].Schema
	got := []any{id["maxLength"], tier["minimum"], tier["maximum"], op["maxLength"]}
	if d := cmp.Diff([]any{9.0, 1.0, 3.0, 18.0}, got); d != "" {
		t.Fatal(d)
	}
	if r := e.Do("GET", "/api/v1/customers/1234567890", e.Token(resources.PermTenancyRead), nil); r.Status != 400 {
		t.Fatalf("a 10-digit customer id: %d", r.Status)
	}
}

package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/net/http/httpguts"
	"pgregory.net/rapid"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// The property-based test of the whole API: operations, parameters and
// bodies are drawn from the served OpenAPI document, valid and invalid
// alike. Whatever is sent, the answer is never a 5xx, every error is a
// problem document, and every 2xx body is valid against its schema. A
// short run is part of `go test`; a longer one: -rapid.checks=5000.

type fuzzOp struct {
	method, path string
	op           map[string]any
}

type fuzzAPI struct {
	doc      map[string]any
	ops      []fuzzOp
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

func loadFuzzAPI(t *testing.T, e *apitest.Env) *fuzzAPI {
	t.Helper()
	r := e.Do("GET", "/api/v1/openapi.json", "", nil)
	f := &fuzzAPI{schemas: map[string]*jsonschema.Schema{}}
	if err := json.Unmarshal(r.Body, &f.doc); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	f.compiler = jsonschema.NewCompiler()
	if err := f.compiler.AddResource("file:///openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	paths := f.doc["paths"].(map[string]any)
	for _, p := range slices.Sorted(mapKeys(paths)) {
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			if op, ok := paths[p].(map[string]any)[m].(map[string]any); ok {
				f.ops = append(f.ops, fuzzOp{strings.ToUpper(m), p, op})
			}
		}
	}
	return f
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// resolve follows a local $ref.
func (f *fuzzAPI) resolve(s map[string]any) map[string]any {
	for s != nil {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s, _ = f.doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	return s
}

func TestFuzzAPI_AnyInputFromTheContract_No5xxProblemsAndValidAnswers(t *testing.T) {
	e := apitest.New(t, apitest.Options{Limiter: api.NewLocalLimiter(1_000_000, nil)})
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "fuzz", AllowDestroy: true, Scopes: fuzzScopes()})
	createCustomer(t, e, tok, acme())
	createModel(t, e, tok, map[string]any{"repo": "org/model", "benchmarks": map[string]any{"x": 1}})
	f := loadFuzzAPI(t, e)
	counts := map[int]int{}
	rapid.Check(t, func(rt *rapid.T) {
		op := rapid.SampledFrom(f.ops).Draw(rt, "operation")
		req := f.request(rt, e, op, tok)
		res := e.Do(req.method, req.target, req.token, req.body, req.headers...)
		counts[res.Status]++
		f.check(rt, op, req, res)
	})
	t.Logf("answers by status: %v", counts)
}

func fuzzScopes() []string {
	var out []string
	for _, p := range resources.Permissions() {
		if p.TokenAllowed {
			out = append(out, p.Key)
		}
	}
	return out
}

type fuzzRequest struct {
	method, target, token string
	body                  any
	headers               []string
}

// request draws one request of op: parameters and body from their schemas,
// each now and then replaced by junk.
func (f *fuzzAPI) request(rt *rapid.T, e *apitest.Env, op fuzzOp, tok string) fuzzRequest {
	req := fuzzRequest{method: op.method, token: tok}
	if rapid.IntRange(0, 19).Draw(rt, "no token") == 0 {
		req.token = rapid.SampledFrom([]string{"", "svc_pat_junk", tok + "x"}).Draw(rt, "bad token")
	}
	path, query := op.path, url.Values{}
	params, _ := op.op["parameters"].([]any)
	for _, p := range params {
		p := p.(map[string]any)
		name, in := p["name"].(string), p["in"].(string)
		required, _ := p["required"].(bool)
		if in != "path" && !required && rapid.Bool().Draw(rt, "omit "+name) {
			continue
		}
		v := f.paramValue(rt, name, f.resolve(asMap(p["schema"])))
		switch in {
		case "path":
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
		case "query":
			query.Set(name, v)
		case "header":
			if !httpguts.ValidHeaderFieldValue(v) {
				v = "not a valid key" // a client cannot send it
			}
			req.headers = append(req.headers, name, v)
		}
	}
	req.target = api.Prefix + path
	if len(query) > 0 {
		req.target += "?" + query.Encode()
	}
	if rb, ok := op.op["requestBody"].(map[string]any); ok {
		req.body = f.body(rt, rb)
		req.headers = append(req.headers, "Content-Type", bodyType(rb))
	}
	return req
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func bodyType(rb map[string]any) string {
	content := asMap(rb["content"])
	if _, ok := content["application/merge-patch+json"]; ok {
		return "application/merge-patch+json"
	}
	return "application/json"
}

// paramValue draws a parameter's value: mostly from its schema, sometimes
// any string at all (NUL, invalid UTF-8 and bad escapes included).
func (f *fuzzAPI) paramValue(rt *rapid.T, name string, s map[string]any) string {
	if rapid.IntRange(0, 5).Draw(rt, "junk "+name) == 0 {
		return rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"\x00", "\xff", "%zz", "1", "0", "release:1",
			strings.Repeat("9", 40)})).Draw(rt, name)
	}
	v := f.value(rt, name, s, 0)
	if str, ok := v.(string); ok {
		return str
	}
	raw, _ := json.Marshal(v)
	return strings.Trim(string(raw), `"`)
}

// body draws a request body from the operation's schema, or junk.
func (f *fuzzAPI) body(rt *rapid.T, rb map[string]any) any {
	switch rapid.IntRange(0, 9).Draw(rt, "body kind") {
	case 0:
		return rapid.SampledFrom([]string{"", "{", "[]", "null", `"x"`, "{\"a\":\"\xff\"}", `{"a":"\u0000"}`,
			`{"roles":[[]],"components":[{}]}`}).Draw(rt, "junk body")
	case 1:
		return map[string]any{}
	}
	var s map[string]any
	for _, mt := range asMap(rb["content"]) {
		s = f.resolve(asMap(asMap(mt)["schema"]))
	}
	return f.value(rt, "body", s, 0)
}

// value draws a JSON value for schema s; depth bounds nesting.
func (f *fuzzAPI) value(rt *rapid.T, label string, s map[string]any, depth int) any {
	s = f.resolve(s)
	if s == nil || depth > 3 {
		return rapid.SampledFrom([]any{nil, "x", 1.0, true}).Draw(rt, label)
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 && rapid.IntRange(0, 9).Draw(rt, label+" off enum") > 0 {
		return rapid.SampledFrom(enum).Draw(rt, label)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		return f.value(rt, label, asMap(rapid.SampledFrom(alts).Draw(rt, label+" alt")), depth)
	}
	switch typeOf(s) {
	case "object":
		return f.object(rt, label, s, depth)
	case "array":
		n := rapid.IntRange(0, 3).Draw(rt, label+" items")
		out := make([]any, n)
		for i := range out {
			out[i] = f.value(rt, label, asMap(s["items"]), depth+1)
		}
		return out
	case "integer":
		return float64(rapid.IntRange(int(num(s, "minimum", -5)), int(num(s, "maximum", 1000))).Draw(rt, label))
	case "number":
		return rapid.Float64Range(num(s, "minimum", -5), num(s, "maximum", 1e6)).Draw(rt, label)
	case "boolean":
		return rapid.Bool().Draw(rt, label)
	case "null":
		return nil
	}
	return f.text(rt, label, s)
}

func (f *fuzzAPI) object(rt *rapid.T, label string, s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props := asMap(s["properties"])
	for _, name := range slices.Sorted(mapKeys(props)) {
		if rapid.IntRange(0, 2).Draw(rt, label+"."+name+" sent") > 0 {
			out[name] = f.value(rt, name, asMap(props[name]), depth+1)
		}
	}
	if extra := asMap(s["additionalProperties"]); extra != nil && rapid.Bool().Draw(rt, label+" extra") {
		out[rapid.StringMatching(`[a-z]{1,8}`).Draw(rt, "key")] = f.value(rt, label, extra, depth+1)
	}
	return out
}

func (f *fuzzAPI) text(rt *rapid.T, label string, s map[string]any) string {
	if p, ok := s["pattern"].(string); ok && rapid.IntRange(0, 4).Draw(rt, label+" off pattern") > 0 {
		return rapid.StringMatching(p).Draw(rt, label)
	}
	if s["format"] == "date-time" && rapid.Bool().Draw(rt, label+" time") {
		return "2026-11-23T10:00:00Z"
	}
	return rapid.StringN(0, int(num(s, "maxLength", 40))+2, -1).Draw(rt, label)
}

func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if v != "null" {
				return v.(string)
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return "string"
}

func num(s map[string]any, key string, def float64) float64 {
	if v, ok := s[key].(float64); ok {
		return v
	}
	return def
}

// check asserts the properties of one answer.
func (f *fuzzAPI) check(rt *rapid.T, op fuzzOp, req fuzzRequest, res *apitest.Response) {
	where := fmt.Sprintf("%s %s → %d: %.300s", req.method, req.target, res.Status, res.Body)
	if res.Status >= 500 {
		rt.Fatalf("server error: %s", where)
	}
	if res.Status >= 400 {
		checkProblemDoc(rt, res, where)
		return
	}
	if len(res.Body) == 0 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		return
	}
	schema := asMap(asMap(asMap(asMap(op.op["responses"])[fmt.Sprint(res.Status)])["content"])["application/json"])["schema"]
	if schema == nil {
		rt.Fatalf("no schema declared for the answer: %s", where)
	}
	if err := f.validate(asMap(schema), res.Body); err != nil {
		rt.Fatalf("answer not valid against its schema: %v\n%s", err, where)
	}
}

func checkProblemDoc(rt *rapid.T, res *apitest.Response, where string) {
	if res.Header.Get("Content-Type") != "application/problem+json" {
		rt.Fatalf("error without a problem document: %s", where)
	}
	var p map[string]any
	if err := json.Unmarshal(res.Body, &p); err != nil {
		rt.Fatalf("problem is not JSON: %s", where)
	}
	code, _ := p["code"].(string)
	// A replay repeats the first answer byte for byte, its request id included.
	replayed := res.Header.Get(api.ReplayedHeader) == "true"
	if code == "" || p["type"] != api.ProblemTypePrefix+code || p["status"] != float64(res.Status) ||
		!replayed && p["request_id"] != res.Header.Get(api.RequestIDHeader) || p["title"] == "" || p["detail"] == "" {
		rt.Fatalf("incomplete problem: %s", where)
	}
}

// validate checks body against a response schema of the document.
func (f *fuzzAPI) validate(schema map[string]any, body []byte) error {
	ref, _ := schema["$ref"].(string)
	if ref == "" {
		return nil // inline schemas are simple: the typed Go outputs guarantee them
	}
	c, ok := f.schemas[ref]
	if !ok {
		var err error
		if c, err = f.compiler.Compile("file:///openapi.json" + ref); err != nil {
			return err
		}
		f.schemas[ref] = c
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return c.Validate(v)
}

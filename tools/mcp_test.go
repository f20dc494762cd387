package tools

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// getOperations lists the ids of the OpenAPI's documented GET operations
// that answer JSON, sorted, and those of every other method (raw-byte GETs
// such as an image download are in neither).
func getOperations(e *env) (gets, others []string) {
	for op := range api.Operations(e.srv.API().OpenAPI()) {
		switch {
		case op.Method != http.MethodGet:
			others = append(others, op.OperationID)
		case !op.Hidden && answersJSON(op.Operation) && op.Extensions[api.ExtPublic] != true:
			gets = append(gets, op.OperationID)
		}
	}
	sort.Strings(gets)
	return gets, others
}

func TestMCP_ToolsListEqualsGETOperations(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(allScopes()...), nil, false)
	lt, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	openWorld := []string{"get-ai-node", "get-customer", "list-ai-nodes"} // code host, live monitoring
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		a := tl.Annotations
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.OpenWorldHint == nil ||
			*a.OpenWorldHint != slices.Contains(openWorld, tl.Name) {
			t.Errorf("%s: annotations %+v", tl.Name, a)
		}
		if tl.InputSchema.Type != "object" || tl.InputSchema.AdditionalProperties != false {
			t.Errorf("%s: input schema %+v", tl.Name, tl.InputSchema)
		}
	}
	gets, writes := getOperations(e)
	if len(gets) == 0 || !slices.Equal(names, gets) {
		t.Fatalf("tools %v, GET operations %v", names, gets)
	}
	if slices.Contains(names, "list-problems") { // public: an MCP resource instead
		t.Error("the public GET /problems is a tool")
	}
	if slices.Contains(names, "get-brand-asset-content") || !slices.Contains(names, "get-brand-asset") {
		t.Errorf("the image download is a tool, or the asset's metadata is not: %v", names)
	}
	for _, w := range writes {
		if slices.Contains(names, w) {
			t.Errorf("write operation %s is a tool", w)
		}
	}
}

// TestMCP_WhoamiSameAsREST: get-whoami answers the bytes of GET /whoami
// (under a budget that stays put, as the calls' charges differ).
func TestMCP_WhoamiSameAsREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *apitest.Options, _ *Config) { o.Limiter = steadyLimiter{} }).enableAPI()
	tok := e.token(resources.PermAuditRead, resources.PermAPITokensRead)
	rest := e.do(http.MethodGet, api.Prefix+"/whoami", map[string]string{"Authorization": "Bearer " + tok}, "")
	if rest.status != http.StatusOK {
		t.Fatalf("REST whoami: %d %s", rest.status, rest.body)
	}
	for _, legacy := range []bool{false, true} {
		res := call(t, e.client(tok, nil, legacy), "get-whoami", nil)
		if res.IsError || resultText(t, res) != string(rest.body) {
			t.Fatalf("legacy=%v: MCP %q, REST %q", legacy, resultText(t, res), rest.body)
		}
		if !jsonEqual(res.StructuredContent, rest.json(t)) {
			t.Fatalf("legacy=%v: structured content %v", legacy, res.StructuredContent)
		}
	}
}

func TestMCP_NoToken_401(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	r := e.do(http.MethodPost, Path, map[string]string{"Content-Type": "application/json"}, body)
	wantProblem(t, r, http.StatusUnauthorized, resources.CodeNotAuthenticated)
	if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
	}
	r = e.do(http.MethodPost, Path, map[string]string{"Content-Type": "application/json",
		"Authorization": "Bearer svc_pat_not-a-token"}, body)
	wantProblem(t, r, http.StatusUnauthorized, resources.CodeTokenInvalid)
	if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
	}
}

func TestMCP_TransportProblems(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	auth := "Bearer " + e.token(resources.PermAuditRead)
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		wantProblem(t, e.do(m, Path, map[string]string{"Authorization": auth}, ""), http.StatusMethodNotAllowed, "method_not_allowed")
	}
	r := e.do(http.MethodPost, Path, map[string]string{"Authorization": auth, "Content-Type": "text/plain"}, "{}")
	wantProblem(t, r, http.StatusUnsupportedMediaType, api.CodeUnsupportedMediaType)
	if r.header.Get("Accept-Post") != "application/json" {
		t.Fatalf("Accept-Post %q", r.header.Get("Accept-Post"))
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}}`
	r = e.do(http.MethodPost, Path, map[string]string{"Authorization": auth, "Content-Type": "application/json"}, big)
	wantProblem(t, r, http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge)
}

// TestMCP_ProxiedHostServed: mcp-go's localhost DNS-rebinding guard is off,
// so a request a same-host proxy forwards over loopback with the public Host
// is served (the Origin check and the bearer token defend instead).
func TestMCP_ProxiedHostServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.ts.URL+Path,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
			`"capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "platform.example.internal"
	req.Header.Set("Authorization", "Bearer "+e.token(resources.PermAuditRead))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
}

func TestMCP_APIOff_404(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // the API is never turned on
	r := e.do(http.MethodPost, Path, map[string]string{"Content-Type": "application/json"}, `{}`)
	wantProblem(t, r, http.StatusNotFound, resources.CodeNotFound)
}

func TestMCP_ProblemBecomesToolError(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAPITokensRead), map[string]string{api.RequestIDHeader: "mcp-test.req-1"}, false)

	p := problemOf(t, call(t, c, "get-api-token", map[string]any{"token_id": "999999"}))
	if p["status"] != 404.0 || p["code"] != resources.CodeAPITokenNotFound ||
		p["instance"] != api.Prefix+"/api-tokens/999999" || p["request_id"] != "mcp-test.req-1" {
		t.Fatalf("unknown id: %v", p)
	}
	p = problemOf(t, call(t, c, "get-api-token", map[string]any{}))
	if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != "token_id" || p["request_id"] != "mcp-test.req-1" {
		t.Fatalf("missing path argument: %v", p)
	}
	p = problemOf(t, call(t, c, "list-api-tokens", map[string]any{"bogus": 1}))
	if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != "bogus" {
		t.Fatalf("unknown argument: %v", p)
	}
	p = problemOf(t, call(t, c, "list-api-tokens", map[string]any{"limit": 0}))
	if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != "limit" {
		t.Fatalf("limit 0: %v", p)
	}

	narrow := e.client(e.token(resources.PermAuditRead), nil, true)
	p = problemOf(t, call(t, narrow, "list-api-tokens", nil))
	want := []any{resources.PermAPITokensRead, resources.PermAPITokensAdmin}
	if p["status"] != 403.0 || p["code"] != resources.CodeForbidden || !jsonEqual(p["required"], want) {
		t.Fatalf("lacking scope: %v", p)
	}
}

func TestMCP_ArgumentsReachREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAPITokensRead), nil, false)
	res := call(t, c, "list-api-tokens", map[string]any{"limit": 1.0, "status": "active"})
	page, _ := res.StructuredContent.(map[string]any)
	items, _ := page["items"].([]any)
	if res.IsError || len(items) != 1 || page["next_cursor"] != nil {
		t.Fatalf("first page: %s", resultText(t, res))
	}
	id := items[0].(map[string]any)["id"].(string)
	res = call(t, c, "get-api-token", map[string]any{"token_id": json.Number(id)})
	if got, _ := res.StructuredContent.(map[string]any); res.IsError || got["id"] != id {
		t.Fatalf("get by numeric id: %s", resultText(t, res))
	}
}

func TestMCP_OriginRefused_403(t *testing.T) {
	t.Parallel()
	const allowed = "https://portal.example"
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, origins := range [][]string{nil, {allowed}} {
		e := newEnv(t, func(_ *apitest.Options, c *Config) { c.AllowedOrigins = origins }).enableAPI()
		tok := e.token(resources.PermAuditRead)
		r := e.do(http.MethodPost, Path, map[string]string{"Origin": "https://evil.example",
			"Authorization": "Bearer " + tok, "Content-Type": "application/json"}, body)
		wantProblem(t, r, http.StatusForbidden, api.CodeOriginNotAllowed)
		if origins == nil {
			continue
		}
		c := e.client(tok, map[string]string{"Origin": allowed}, false)
		if res := call(t, c, "get-meta", nil); res.IsError {
			t.Fatalf("allowed origin: %s", resultText(t, res))
		}
	}
}

func TestMCP_Catalogues(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAuditRead), nil, false)
	req := mcp.ReadResourceRequest{}
	req.Params.URI = PermissionsURI
	res, err := c.ReadResource(t.Context(), req)
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	var items []api.PermissionItem
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &items); err != nil ||
		len(items) != len(resources.Permissions()) {
		t.Fatalf("permissions: %v %v", err, items)
	}
	req.Params.URI = ContractURI
	if res, err = c.ReadResource(t.Context(), req); err != nil ||
		!strings.Contains(res.Contents[0].(mcp.TextResourceContents).Text, `"get-whoami"`) {
		t.Fatalf("contract: %v", err)
	}
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestMain is apitest.Main: every status a test's server answered must be
// declared by its operation, tool calls' in-process GETs included (their
// 413 result_too_large, the MCP result budget, is a tool error, never an
// HTTP answer, and apitest leaves it out: apitest.OverHTTP).
func TestMain(m *testing.M) { apitest.Main(m) }

const adminEmail = apitest.AdminEmail

// env is a running server: apitest's fresh database and real HTTP server,
// with the MCP endpoint mounted.
type env struct {
	t      *testing.T
	api    *apitest.Env
	srv    *api.Server
	mcp    *MCP
	ts     *httptest.Server
	tokens int
}

// envOption adjusts the configuration before the server is built.
type envOption func(*apitest.Options, *Config)

// newEnv builds a server on a fresh database with an administrator
// (apitest.AdminEmail) and the API off until enableAPI.
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t}
	var tcfg Config
	o := apitest.Options{Disabled: true}
	for _, opt := range opts {
		opt(&o, &tcfg)
	}
	o.Mount = func(srv *api.Server) {
		m, err := New(srv, tcfg)
		if err != nil {
			t.Fatal(err)
		}
		e.srv, e.mcp = srv, m
	}
	e.api = apitest.New(t, o)
	e.ts = e.api.HTTP
	return e
}

// enableAPI turns the API on, as an administrator does in the portal.
func (e *env) enableAPI() *env {
	e.t.Helper()
	if _, err := e.api.Portal.SetAPIEnabled(e.t.Context(), resources.Actor{Label: adminEmail}, true); err != nil {
		e.t.Fatal(err)
	}
	return e
}

// token mints a personal token of the administrator with the scopes.
func (e *env) token(scopes ...string) string {
	e.t.Helper()
	e.tokens++
	return e.api.TokenFor(adminEmail, resources.NewToken{Name: fmt.Sprintf("tools-test-%d", e.tokens), Scopes: scopes})
}

// client connects an initialized MCP client with the bearer token and the
// extra headers; legacy restricts it to the initialize-handshake protocol.
func (e *env) client(token string, extra map[string]string, legacy bool) *client.Client {
	e.t.Helper()
	headers := map[string]string{"Authorization": "Bearer " + token}
	maps.Copy(headers, extra)
	var c *client.Client
	if legacy {
		tr, err := transport.NewStreamableHTTP(e.ts.URL+Path, transport.WithHTTPHeaders(headers))
		if err != nil {
			e.t.Fatal(err)
		}
		c = client.NewClient(tr, client.WithLegacyProtocolOnly())
	} else {
		var err error
		if c, err = client.NewStreamableHttpClient(e.ts.URL+Path, transport.WithHTTPHeaders(headers)); err != nil {
			e.t.Fatal(err)
		}
	}
	e.t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "tools-test", Version: "1"}
	ir, err := c.Initialize(e.t.Context(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Logf("MCP protocol %s (legacy only: %v)", ir.ProtocolVersion, legacy)
	return c
}

// call runs tools/call and fails the test on a transport or JSON-RPC error.
func call(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(context.WithoutCancel(t.Context()), req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// resultText is the text of a result's single text content.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

// problemOf asserts res is a tool error and returns its problem document,
// checking that the text is the same problem as the structured content.
func problemOf(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got %s", resultText(t, res))
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structured content is %T", res.StructuredContent)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(resultText(t, res)), &fromText); err != nil {
		t.Fatalf("error text is not JSON: %v", err)
	}
	if !jsonEqual(fromText, sc) {
		t.Fatalf("text %v and structured content %v differ", fromText, sc)
	}
	return sc
}

// response is a recorded HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body as an object.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

// do sends one HTTP request to the test server.
func (e *env) do(method, path string, headers map[string]string, body string) response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.ts.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// jsonEqual compares two values by their JSON encoding.
func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// wantProblem checks a problem document's status, code and content type.
func wantProblem(t *testing.T, r response, status int, code string) map[string]any {
	t.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("want %d problem, got %d %s: %s", status, r.status, r.header.Get("Content-Type"), r.body)
	}
	p := r.json(t)
	if p["code"] != code || p["type"] != api.ProblemTypePrefix+code || p["request_id"] != r.header.Get(api.RequestIDHeader) {
		t.Fatalf("want code %s, got %v", code, p)
	}
	return p
}

package tools

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// countingBody is an endless JSON-RPC message; read counts what was taken.
type countingBody struct{ read atomic.Int64 }

func (b *countingBody) Read(p []byte) (int, error) {
	if b.read.Load() == 0 {
		b.read.Add(1)
		return copy(p, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`), nil
	}
	if b.read.Load() > 200<<20 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'a'
	}
	b.read.Add(int64(len(p)))
	return len(p), nil
}

func TestMCP_BodyOver1MiBUnknownLength_413AndNotReadOn(t *testing.T) {
	e := newEnv(t).enableAPI()
	body := &countingBody{}
	req, _ := http.NewRequest(http.MethodPost, e.ts.URL+Path, io.NopCloser(body))
	req.Header.Set("Authorization", "Bearer "+e.token(resources.PermAuditRead))
	req.Header.Set("Content-Type", "application/json")
	if res, err := e.ts.Client().Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	if n := body.read.Load(); n > 8<<20 {
		t.Fatalf("the server read %d MB", n>>20)
	}
}

func TestMCP_SlowBody_CutOffWith408(t *testing.T) {
	e := newEnv(t, func(o *apitest.Options, _ *Config) { o.BodyReadTimeout = 300 * time.Millisecond }).enableAPI()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+e.token(resources.PermAuditRead)+
		"\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":")
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	if res.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d", res.StatusCode)
	}
}

func TestMCP_NULInToolArgument_400NamingIt(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead, resources.PermAIRead), nil, false)
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"list-customers", map[string]any{"short_name": "A\x00B"}, "short_name"},
		{"get-ai-node", map[string]any{"hostname": "gpu\x00one"}, "hostname"},
		{"list-tenants", map[string]any{"slug": "a\x00"}, "slug"},
	} {
		p := problemOf(t, call(t, c, tc.tool, tc.args))
		if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != tc.field {
			t.Fatalf("%s: %v", tc.tool, p)
		}
	}
}

// Issue 18, R2: an agent that passes an empty id ("") must not read the
// unfiltered list; the tool answers invalid_parameter naming the argument.
func TestMCP_EmptyFilterArgument_ToolErrorInvalidParameter(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead), nil, false)
	for _, args := range []map[string]any{{"customer_id": ""}, {"slug": "", "limit": 5}} {
		p := problemOf(t, call(t, c, "list-tenants", args))
		if p["code"] != "invalid_parameter" || !strings.Contains(fmt.Sprint(p["detail"], p["errors"]), "must not be empty") {
			t.Fatalf("%v: %v", args, p)
		}
	}
}

// A path argument reaches its operation through api.Server.Invoke: a
// missing or empty one is invalid_parameter naming it, saying which (never the list at
// the parent path), and one holding a slash stays one path segment (404 of
// the item, not another route).
func TestMCP_PathArgument_MissingEmptyOrSlash(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAIRead), nil, false)
	for _, args := range []map[string]any{{}, {"hostname": nil}, {"hostname": ""}} {
		p := problemOf(t, call(t, c, "get-ai-node", args))
		if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != "hostname" {
			t.Fatalf("%v: %v", args, p)
		}
	}
	details := map[string]string{`{}`: "is required", `{"hostname":""}`: "must not be empty"}
	for args, want := range details {
		var a map[string]any
		_ = json.Unmarshal([]byte(args), &a)
		p := problemOf(t, call(t, c, "get-ai-node", a))
		if !strings.Contains(fmt.Sprint(p["detail"]), want) {
			t.Fatalf("%s: detail %q, want %q", args, p["detail"], want) // an agent that sent "" is told so
		}
	}
	p := problemOf(t, call(t, c, "get-ai-node", map[string]any{"hostname": "gpu-01/caches"}))
	if p["code"] != "ai_node_not_found" {
		t.Fatalf("a hostname with a slash: %v", p)
	}
}

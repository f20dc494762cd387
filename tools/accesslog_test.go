package tools

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestAccessLog_MCPToolCall_OuterAndInnerLines: a tools/call is one
// POST /mcp line naming the JSON-RPC method and the tool, and one line for
// the in-process GET it runs, with the operation, the tool and the token;
// both with the request's id and client (behind a trusted proxy: the
// address it forwarded).
func TestAccessLog_MCPToolCall_OuterAndInnerLines(t *testing.T) {
	for _, legacy := range []bool{false, true} { // the newest protocol the client speaks, and a legacy one
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) { testAccessLines(t, legacy, false) })
	}
	t.Run("behind a trusted proxy", func(t *testing.T) { testAccessLines(t, false, true) })
}

func testAccessLines(t *testing.T, legacy, proxied bool) {
	var extra map[string]string
	var opts []envOption
	client := "127.0.0.1"
	if proxied {
		client, extra = "10.20.30.40", map[string]string{"X-Forwarded-For": "10.20.30.40"}
		opts = append(opts, func(o *apitest.Options, _ *Config) {
			o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		})
	}
	e := newEnv(t, opts...).enableAPI()
	tok := e.token(resources.PermAIRead)
	c := e.client(tok, extra, legacy)
	call(t, c, "get-meta", nil)
	var got []map[string]any
	ids, clients := map[any]bool{}, map[any]bool{}
	for _, line := range strings.Split(strings.TrimSpace(e.api.LogText()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "request" {
			continue
		}
		if m["mcp_tool"] == nil {
			continue // initialize and its notification
		}
		if m["token_id"] == nil || m["request_id"] == nil {
			t.Errorf("access line without token or request id: %v", m)
		}
		ids[m["request_id"]], clients[m["client"]] = true, true
		got = append(got, map[string]any{"operation": m["operation"], "method": m["method"], "route": m["route"],
			"status": m["status"], "mcp_method": m["mcp_method"], "mcp_tool": m["mcp_tool"]})
	}
	want := []map[string]any{
		{"operation": "get-meta", "method": "GET", "route": "/api/v1/meta", "status": 200.0,
			"mcp_method": nil, "mcp_tool": "get-meta"},
		{"operation": "mcp", "method": "POST", "route": "/mcp", "status": 200.0,
			"mcp_method": "tools/call", "mcp_tool": "get-meta"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("access lines (-want +got):\n%s", d)
	}
	if len(ids) != 1 || len(clients) != 1 || !clients[client] {
		t.Fatalf("the tool call's lines disagree on the request or its client: ids %v, clients %v",
			ids, clients)
	}
	if strings.Contains(e.api.LogText(), tok) {
		t.Fatal("the log holds the token")
	}
}

func TestAccessLog_MCPRefused_OperationMCP(t *testing.T) {
	e := newEnv(t).enableAPI()
	wantProblem(t, e.do("POST", Path, map[string]string{"Content-Type": "application/json"}, `{}`), 401, "not_authenticated")
	if !strings.Contains(e.api.LogText(), `"operation":"mcp","method":"POST","route":"/mcp","status":401`) {
		t.Fatalf("no access line for the refused POST /mcp:\n%s", e.api.LogText())
	}
}

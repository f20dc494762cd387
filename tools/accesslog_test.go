package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// TestAccessLog_MCPToolCall_OuterAndInnerLines: a tools/call is one
// POST /mcp line naming the JSON-RPC method and the tool, and one line for
// the in-process GET it runs, with the operation, the tool and the token.
func TestAccessLog_MCPToolCall_OuterAndInnerLines(t *testing.T) {
	for _, legacy := range []bool{false, true} { // the newest protocol the client speaks, and a legacy one
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) { testAccessLines(t, legacy) })
	}
}

func testAccessLines(t *testing.T, legacy bool) {
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAIRead)
	c := e.client(tok, nil, legacy)
	call(t, c, "get-meta", nil)
	var got []map[string]any
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

package tools

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"platformapi/resources"
)

// An agent that calls a tool the server does not serve (a guessed name, a
// name of another server, a misspelling) gets MCP's -32602 Invalid params
// telling it what to do: call tools/list, and, when the name differs from a
// tool it can call only in case or in '_' for '-', that tool. tools/call
// without a name says the name is missing rather than that no tool of the
// empty name is found.
func TestMCP_ToolsCall_UnknownTool_InvalidParamsPointingToToolsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermProjectsRead)
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	for name, c := range map[string]struct {
		body   string
		extra  map[string]string
		status int
		want   []string
		not    string
	}{
		"unknown": {body: callBody(`"name":"no-such-tool","arguments":{}`), status: 200,
			want: []string{"no-such-tool", "tools/list"}, not: "did you mean"},
		"underscores": {body: callBody(`"name":"list_projects","arguments":{}`), status: 200,
			want: []string{"list_projects", "did you mean list-projects", "tools/list"}},
		"capitals": {body: callBody(`"name":"Get-Project"`), status: 200,
			want: []string{"did you mean get-project", "tools/list"}},
		"near a tool it cannot call": {body: callBody(`"name":"list_users"`), status: 200,
			want: []string{"tools/list"}, not: "did you mean"},
		"no name": {body: callBody(`"arguments":{}`), status: 200,
			want: []string{"params.name", "tools/list"}, not: "''"},
		"no params": {body: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, status: 200,
			want: []string{"params.name", "tools/list"}},
		"2026-07-28": {body: callBody(`"name":"nope",` + modernMeta),
			extra: map[string]string{"MCP-Protocol-Version": "2026-07-28",
				"Mcp-Method": "tools/call", "Mcp-Name": "nope"},
			status: 400, want: []string{"nope", "tools/list"}},
	} {
		t.Run(name, func(t *testing.T) {
			msg := wantRPCError(t, e.post(Path, tok, c.body, c.extra), c.status, -32602, "1", "")
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if c.not != "" && strings.Contains(msg, c.not) {
				t.Errorf("message %q has %q", msg, c.not)
			}
		})
	}
}

// A tool that exists keeps its own answers: a hidden tool still answers
// REST's 403 as a tool error (not "unknown tool"), and -32602 answers of a
// known tool are left as mcp-go wrote them.
func TestMCP_ToolsCall_HiddenTool_StillAToolErrorNotUnknown(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermProjectsRead)
	r := e.post(Path, tok, callBody(`"name":"list-users","arguments":{}`), nil)
	var a rpcAnswer
	if err := json.Unmarshal(r.body, &a); err != nil || a.Error != nil || r.status != http.StatusOK ||
		!strings.Contains(string(a.Result), `"isError":true`) ||
		!strings.Contains(string(a.Result), "forbidden") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// prompts/get of a prompt not offered to the caller (unknown, or naming a
// tool the token cannot call) is -32602 pointing to prompts/list.
func TestMCP_PromptsGet_UnknownPrompt_InvalidParamsPointingToPromptsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermProjectsRead)
	for name, prompt := range map[string]string{"unknown": "nope", "not offered": "who-changed",
		"no name": ""} {
		t.Run(name, func(t *testing.T) {
			r := e.rpc(Path, tok, "prompts/get", map[string]any{"name": prompt}, nil)
			msg := wantRPCError(t, r.response, 200, -32602, "1", "prompts/list")
			if want := cmp.Or(prompt, "params.name is required"); !strings.Contains(msg, want) {
				t.Fatalf("message %q does not say %s", msg, want)
			}
		})
	}
}

// resources/read of a URI the server does not serve stays -32002 Resource
// not found, naming the URI and pointing to resources/list.
func TestMCP_ResourcesRead_UnknownURI_PointsToResourcesList(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermProjectsRead)
	r := e.rpc(Path, tok, "resources/read", map[string]any{"uri": "platformapi://nope"}, nil)
	msg := wantRPCError(t, r.response, 200, -32002, "1", "resources/list")
	if !strings.Contains(msg, "platformapi://nope") {
		t.Fatalf("message %q", msg)
	}
}

// This server lists everything in one page and never sets nextCursor, so a
// cursor sent to a list method was never issued: -32602 saying so and to
// call it without one, not the base64 decoder's words.
func TestMCP_ListMethods_CursorNeverIssued_InvalidParamsSayingSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermProjectsRead)
	methods := []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
	for _, method := range methods {
		t.Run(method, func(t *testing.T) {
			r := e.rpc(Path, tok, method, map[string]any{"cursor": "zzz"}, nil)
			msg := wantRPCError(t, r.response, 200, -32602, "1", "without cursor")
			if strings.Contains(msg, "base64") {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

// callBody is a tools/call request with id 1 and the params' members.
func callBody(params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + params + `}}`
}

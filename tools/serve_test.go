package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"platformapi/api"
	"platformapi/api/apitest"
)

// referencePath serves POST /mcp's admission followed by mcp-go's own
// streamable HTTP transport (stateless), the reference the one handler is
// held to.
const referencePath = "/mcp-reference"

// mountReference mounts referencePath on e's router.
func mountReference(e *env) {
	ref := server.NewStreamableHTTPServer(e.mcp.mcp, server.WithStateLess(true),
		server.WithDisableLocalhostProtection(true))
	e.srv.Router().Post(referencePath, func(w http.ResponseWriter, r *http.Request) {
		o, _, err := e.mcp.admit(w, r)
		if err != nil {
			e.srv.WriteError(w, r, err)
			return
		}
		ref.ServeHTTP(w, r.WithContext(e.mcp.withSession(context.WithValue(r.Context(), outerKey{}, o), o)))
	})
}

// steadyLimiter grants every charge and answers the same budget, so that
// two answers to one message are alike byte for byte, the rate budget in
// their _meta included.
type steadyLimiter struct{}

// Take implements api.RateLimiter.
func (steadyLimiter) Take(context.Context, string, int) (api.RateDecision, error) {
	return api.RateDecision{Allowed: true, Limit: api.RatePerMinute, Remaining: 500}, nil
}

// TestMCP_OneHandler_AnswersWhatMcpGosTransportAnswers: every message of
// both protocol eras gets from the one handler the status, media type and
// bytes mcp-go's streamable HTTP transport gives it: initialize, lists,
// calls (HTML-escaped characters, a line separator, projected lists, tool
// errors, unknown tools, string ids, _meta, the rate budget in the result's
// _meta), pings and their answers, notifications, bad JSON, and 2026-07-28
// requests with right and wrong headers.
func TestMCP_OneHandler_AnswersWhatMcpGosTransportAnswers(t *testing.T) {
	e := newEnv(t, func(o *apitest.Options, _ *Config) { o.Limiter = steadyLimiter{} }).enableAPI()
	mountReference(e)
	tok := populate(t, e)
	auth := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	customer := `{"short_name":"LSEP","long_name":"Line\u2028Sep","vcs_group":"lsep",` +
		`"primary_contact_email":"a@lsep.example","primary_contact_name":"Al"}`
	if r := e.do(http.MethodPost, api.Prefix+"/customers", auth, customer); r.status != 201 {
		t.Fatalf("create a customer: %d %s", r.status, r.body)
	}
	for name, c := range oneRoadCases() {
		t.Run(name, func(t *testing.T) {
			headers := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json",
				"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": c.version,
				api.RequestIDHeader: "req_ONEROADTEST"} // the same id in both answers
			for k, v := range c.headers {
				headers[k] = v
			}
			got := e.do(http.MethodPost, Path, headers, c.body)
			want := e.do(http.MethodPost, referencePath, headers, c.body)
			type answer struct {
				Status      int
				ContentType string
				Body        string
			}
			if d := cmp.Diff(answer{want.status, want.header.Get("Content-Type"), string(want.body)},
				answer{got.status, got.header.Get("Content-Type"), string(got.body)}); d != "" {
				t.Errorf("one handler vs mcp-go's transport (-transport +ours):\n%s", d)
			}
		})
	}
}

// oneRoadCase is one message and the protocol version header it is sent with.
type oneRoadCase struct {
	version, body string
	headers       map[string]string
}

func oneRoadCases() map[string]oneRoadCase {
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name +
			`","arguments":` + args + `}}`
	}
	const legacy, modern = "2025-11-25", "2026-07-28"
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	modernCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-whoami",` + modernMeta + `}}`
	modernHeaders := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get-whoami"}
	return map[string]oneRoadCase{
		"initialize": {"", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":` +
			`"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil},
		"initialized":                        {legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		"tools/list":                         {legacy, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil},
		"resources/list":                     {legacy, `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, nil},
		"prompts/list":                       {legacy, `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, nil},
		"ping":                               {legacy, `{"jsonrpc":"2.0","id":"p","method":"ping"}`, nil},
		"a ping's answer":                    {legacy, `{"jsonrpc":"2.0","id":3,"result":{}}`, nil},
		"unknown method":                     {legacy, `{"jsonrpc":"2.0","id":1,"method":"no/such"}`, nil},
		"wrong jsonrpc":                      {legacy, `{"jsonrpc":"1.0","id":1,"method":"ping"}`, nil},
		"not JSON":                           {legacy, `{"jsonrpc":`, nil},
		"escaped characters":                 {legacy, call("1", "get-customer", `{"customer_id":"1"}`), nil},
		"line separator, escaped by the API": {legacy, call("2", "get-customer", `{"customer_id":"2"}`), nil},
		"projected list":                     {legacy, call("3", "list-customers", `{"fields":"short_name,notes","limit":5}`), nil},
		"model with caches":                  {legacy, call("4", "get-ai-model", `{"model_id":"1"}`), nil},
		"tool error":                         {legacy, call("5", "get-customer", `{"customer_id":"999"}`), nil},
		"bad argument":                       {legacy, call("6", "get-customer", `{"customer_id":"x"}`), nil},
		"string id":                          {legacy, call(`"call-8"`, "get-whoami", `{}`), nil},
		"arguments not an object":            {legacy, call("10", "get-customer", `"x"`), nil},
		"progress token meta": {legacy, `{"jsonrpc":"2.0","id":9,"method":"tools/call",` +
			`"params":{"name":"get-whoami","_meta":{"progressToken":"p"}}}`, nil},
		"cancellation":               {legacy, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, nil},
		"modern call":                {modern, modernCall, modernHeaders},
		"modern call, no header":     {"", modernCall, nil},
		"modern call, other version": {legacy, modernCall, modernHeaders},
		"modern call, wrong name": {modern, modernCall, map[string]string{"Mcp-Method": "tools/call",
			"Mcp-Name": "get-meta"}},
		"modern call, Last-Event-ID": {modern, modernCall, map[string]string{"Mcp-Method": "tools/call",
			"Mcp-Name": "get-whoami", "Last-Event-ID": "1"}},
		"modern header, legacy body": {modern, call("1", "get-whoami", `{}`), modernHeaders},
		"modern call, no capabilities": {modern, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` +
			`"name":"get-whoami","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHeaders},
		"modern list": {modern, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`,
			map[string]string{"Mcp-Method": "tools/list"}},
		"modern ping answer": {modern, `{"jsonrpc":"2.0","id":3,"result":{}}`, nil},
		"modern answer":      {modern, `{"jsonrpc":"2.0","id":3,"result":{"x":1}}`, nil},
	}
}

// TestMCP_OneHandler_WhereItDiffersFromTheTransport: the messages the one
// handler answers otherwise than mcp-go's streamable HTTP transport, on
// purpose; each case says why and what the transport answers.
func TestMCP_OneHandler_WhereItDiffersFromTheTransport(t *testing.T) {
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	for _, c := range differingCases() {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json",
				"MCP-Protocol-Version": c.version}
			for k, v := range c.headers {
				h[k] = v
			}
			r := e.do(http.MethodPost, Path, h, c.body)
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if r.status != c.status || r.header.Get("Content-Type") != "application/json" ||
				jsonUnmarshal(r.body, &m) != nil || m.Error.Code != c.code ||
				c.id != "" && string(m.ID) != c.id {
				t.Fatalf("%s: %d %s %s", c.why, r.status, r.header.Get("Content-Type"), r.body)
			}
		})
	}
}

// differingCase is a message the one handler answers on purpose otherwise
// than the transport: the status, JSON-RPC error code (0: a result) and,
// when set, the raw id of its answer, and why.
type differingCase struct {
	name, version, body string
	headers             map[string]string
	status, code        int
	id, why             string
}

func differingCases() []differingCase {
	const legacy = "2025-11-25"
	const invalid = "JSON-RPC 2.0 §4 answers every request; -32600 is Invalid Request, -32700 only " +
		"for a body that is not JSON; status as the era maps -32600. "
	return []differingCase{
		{"unsupported version", "1999-01-01", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400,
			-32022, "", "a JSON-RPC error; the transport answers text/plain"},
		{"listen", "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"Mcp-Method": "subscriptions/listen"}, 404, -32601, "",
			"the server sends no notifications; the transport would hold a stream open"},
		{"an id, no method, no answer", legacy, `{"jsonrpc":"2.0","id":3}`, nil, 200, -32600, "3",
			invalid + "no method and neither result nor error: no response; the transport: 202, no answer"},
		{"an id neither string nor integer", "", `{"jsonrpc":"2.0","id":1e400,"method":"tools/call",` +
			`"params":{"name":"get-whoami","arguments":{}}}`, nil, 200, -32600, "null",
			invalid + "MCP ids are strings or integers; the transport: a parse error (others it echoes)"},
		{"batch", legacy, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 200, -32600, "null",
			invalid + "batches are not supported; the transport: its parse error, 400"},
		{"batch, 2026-07-28", "2026-07-28", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil,
			400, -32600, "null", invalid + "the transport: its parse error"},
		{"a string", legacy, `"x"`, nil, 200, -32600, "null",
			invalid + "not one object; the transport: its parse error, 400"},
		{"null", legacy, `null`, nil, 200, -32600, "null",
			invalid + `not one object; the transport: "Invalid JSON-RPC version"`},
		{"method a number", legacy, `{"jsonrpc":"2.0","id":1,"method":5}`, nil, 200, -32600, "1",
			invalid + "the method is not a string; the transport: its parse error, 400, id null"},
		{"params a string", legacy, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`,
			nil, 200, -32600, "1",
			invalid + "params are not an object; the transport: a -32600 naming Go types"},
		{"a params member of the wrong type", legacy, `{"jsonrpc":"2.0","id":1,"method":"tools/call",` +
			`"params":{"name":5}}`, nil, 200, -32602, "1",
			"Invalid params naming the member; the transport: a -32600 naming Go types"},
		{"unknown tool", legacy, `{"jsonrpc":"2.0","id":7,"method":"tools/call",` +
			`"params":{"name":"no-such-tool","arguments":{}}}`, nil, 200, -32602, "7",
			"the message says to call tools/list; the transport: \"tool 'no-such-tool' not found\""},
		{"large id", legacy, `{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call",` +
			`"params":{"name":"get-whoami","arguments":{}}}`, nil, 200, 0, "12345678901234567890",
			"JSON-RPC 2.0 §5: the answer's id is the request's; the transport reads it through float64"},
	}
}

// TestMCP_Answer_StatesItsLength_NotChunked: a tool's answer larger than
// net/http's 2 KB buffer goes out whole with its Content-Length, not in
// chunks of unknown total.
func TestMCP_Answer_StatesItsLength_NotChunked(t *testing.T) {
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	if _, err := e.api.Store.DB().ExecContext(t.Context(),
		`UPDATE ai_models SET description = repeat('A longer description. ', 30) WHERE id = 1`,
	); err != nil {
		t.Fatal(err)
	}
	r := e.rpc(Path, tok, "tools/call", map[string]any{"name": "get-ai-model",
		"arguments": map[string]any{"model_id": "1"}}, nil)
	if r.status != http.StatusOK || len(r.body) <= 2048 {
		t.Fatalf("want a 200 answer over 2 KB: %d, %d bytes", r.status, len(r.body))
	}
	if got := r.header.Get("Content-Length"); got != strconv.Itoa(len(r.body)) {
		t.Fatalf("Content-Length %q for a %d-byte answer", got, len(r.body))
	}
}

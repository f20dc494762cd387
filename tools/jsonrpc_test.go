package tools

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"platformapi/resources"
)

// modernVersion is the protocol version of the 2026-07-28 era, whose
// JSON-RPC errors carry their own HTTP statuses (-32600: 400).
var modernVersion = map[string]string{"MCP-Protocol-Version": "2026-07-28"}

// rpcAnswer is a JSON-RPC answer as written: its raw id, its result, its
// error.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wantRPCError checks that r is a JSON-RPC error with status, code, the raw
// id and a message containing text, and returns its message.
func wantRPCError(t *testing.T, r response, status, code int, id, text string) string {
	t.Helper()
	var a rpcAnswer
	if r.status != status || r.header.Get("Content-Type") != "application/json" ||
		json.Unmarshal(r.body, &a) != nil || a.Error == nil {
		t.Fatalf("want a %d JSON-RPC error, got %d %s: %s", status, r.status,
			r.header.Get("Content-Type"), r.body)
	}
	if a.Error.Code != code || string(a.ID) != id || !strings.Contains(a.Error.Message, text) {
		t.Fatalf("want code %d, id %s, a message with %q; got %s", code, id, text, r.body)
	}
	return a.Error.Message
}

// JSON-RPC 2.0 §4: the server answers every request that is not a
// notification. A message with an id and an empty or missing method that
// carries neither result nor error is no response: it is an Invalid
// Request (-32600; 200 in the legacy era, 400 in the 2026-07-28 era), not
// accepted with 202 and left unanswered.
func TestMCP_RequestWithIDButNoMethod_InvalidRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	for _, c := range []struct {
		name, body string
		extra      map[string]string
		status     int
		id         string
	}{
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, nil, 200, `1`},
		{"no method", `{"jsonrpc":"2.0","id":"a"}`, nil, 200, `"a"`},
		{"no method, 2026-07-28", `{"jsonrpc":"2.0","id":1}`, modernVersion, 400, `1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantRPCError(t, e.post(Path, tok, c.body, c.extra), c.status, -32600, c.id, "method")
		})
	}
}

// MCP: request ids MUST NOT be null. A request with "id": null and a method
// is an Invalid Request, answered, not taken for a notification and
// dropped without a word.
func TestMCP_RequestWithNullID_InvalidRequestNotDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get-meta","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	} {
		wantRPCError(t, e.post(Path, tok, body, nil), 200, -32600, `null`, "id")
	}
}

// MCP: request ids MUST be a string or an integer (JSON-RPC 2.0 forbids
// objects and arrays too). Any other id is an Invalid Request, answered
// with id null since its id cannot be echoed as one.
func TestMCP_IDNotAStringOrInteger_InvalidRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	for _, id := range []string{`{"a":1}`, `[1]`, `true`, `1.5`, `1.0`, `1e3`, `1e400`} {
		t.Run(id, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
			wantRPCError(t, e.post(Path, tok, body, nil), 200, -32600, `null`, "string or an integer")
		})
	}
}

// Notifications (no id member) and clients' responses (an id and a result
// or an error, null ids included: an error about an unreadable request)
// keep their 202 with no body.
func TestMCP_NotificationsAndClientResponses_Accepted202(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":null}`,
		`{"jsonrpc":"2.0","id":"s","result":{"x":1}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such method"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
	} {
		if r := e.post(Path, tok, body, nil); r.status != http.StatusAccepted || len(r.body) != 0 {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
}

// JSON-RPC 2.0 keeps -32700 for a body that is not JSON; valid JSON that is
// not one request object (a batch, a string, null, a number), or whose
// method is not a string or whose params are not an object, is an Invalid
// Request (-32600) saying what is wrong, with the request's id when it is
// readable.
func TestMCP_ValidJSONButNotOneRequest_InvalidRequestSayingWhat(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	const batch = "batches are not supported: send one JSON-RPC request per POST"
	for _, c := range []struct {
		name, body string
		extra      map[string]string
		status     int
		code       int
		id, text   string
	}{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 200, -32600, `null`, batch},
		{"batch, 2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
			map[string]string{"MCP-Protocol-Version": "2025-03-26"}, 200, -32600, `null`, batch},
		{"batch, 2026-07-28", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, modernVersion, 400, -32600,
			`null`, batch},
		{"string", `"x"`, nil, 200, -32600, `null`, "one JSON-RPC request object"},
		{"null", `null`, nil, 200, -32600, `null`, "one JSON-RPC request object"},
		{"number", `5`, nil, 200, -32600, `null`, "one JSON-RPC request object"},
		{"method a number", `{"jsonrpc":"2.0","id":1,"method":5}`, nil, 200, -32600, `1`,
			"method must be a string"},
		{"params a string", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}`, nil, 200,
			-32600, `2`, "params must be an object"},
		{"params an array", `{"jsonrpc":"2.0","id":"p","method":"ping","params":[1]}`, nil, 200, -32600,
			`"p"`, "params must be an object"},
		{"not JSON", `{"jsonrpc":`, nil, 400, -32700, `null`, "not valid json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantRPCError(t, e.post(Path, tok, c.body, c.extra), c.status, c.code, c.id, c.text)
		})
	}
}

// JSON-RPC 2.0 §5: the response's id MUST be the request's. mcp-go reads
// ids through float64, which changes integers past 2^53; the answer
// carries the id exactly as the client wrote it, of a ping, of a tool call
// and of an error.
func TestMCP_IntegerIDAbove2To53_ComesBackExactly(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	for _, id := range []string{"9007199254740993", "-9007199254740993", "12345678901234567890"} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get-meta","arguments":{}}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such"}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get-customer",` +
				`"arguments":{"customer_id":"x"}}}`,
		} {
			r := e.post(Path, tok, body, nil)
			var a rpcAnswer
			if r.status != http.StatusOK || json.Unmarshal(r.body, &a) != nil || string(a.ID) != id {
				t.Errorf("%s: %d %.200s", body, r.status, r.body)
			}
		}
	}
}

// JSON-RPC 2.0: a request whose params hold a member of the wrong type is
// Invalid params (-32602), as MCP answers other bad params. The message
// names the member and the type it takes; it never carries the decoder's
// words (Go struct and type names). Before, mcp-go's "unparsable tools/call
// request: json: cannot unmarshal number into Go struct field
// CallToolRequest.params.name of type string" came back as -32600.
func TestMCP_ParamsMemberOfWrongType_InvalidParamsNamingIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	for _, c := range []struct{ method, params, text string }{
		{"tools/call", `{"name":5,"arguments":{}}`, "params.name must be a string, not a number"},
		{"tools/call", `{"name":"get-meta","_meta":"x"}`, "params._meta must be an object, not a string"},
		{"tools/list", `{"cursor":5}`, "params.cursor must be a string, not a number"},
		{"resources/read", `{"uri":true}`, "params.uri must be a string, not a boolean"},
		{"initialize", `{"protocolVersion":"2025-06-18","capabilities":[1],` +
			`"clientInfo":{"name":"c","version":"1"}}`,
			"params.capabilities must be an object, not an array"},
	} {
		t.Run(c.method+" "+c.params, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":4,"method":"` + c.method + `","params":` + c.params + `}`
			msg := wantRPCError(t, e.post(Path, tok, body, nil), 200, -32602, `4`, c.text)
			if strings.Contains(msg, "Go struct") || strings.Contains(msg, "json:") {
				t.Fatalf("the message carries the decoder's words: %s", msg)
			}
		})
	}
}

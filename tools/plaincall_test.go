package tools

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/resources"
)

// transportPath serves POST /mcp's guard followed by mcp-go's transport
// for every message (no plain-call answer): the reference answerCall must
// match.
const transportPath = "/mcp-transport"

// mountTransportOnly mounts transportPath on e's router.
func mountTransportOnly(e *env) {
	e.srv.Router().Post(transportPath, func(w http.ResponseWriter, r *http.Request) {
		o, _, err := e.mcp.admit(w, r)
		if err != nil {
			e.srv.WriteError(w, r, err)
			return
		}
		e.mcp.transport.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), outerKey{}, o)))
	})
}

// TestPlainCall_AnswersWhatTheTransportAnswers: a legacy-era tools/call
// answered by answerCall carries the same status, media type and bytes as
// mcp-go's transport gives: results with HTML-escaped characters and a line
// separator, projected lists, tool errors, unknown tools, string ids, _meta.
func TestPlainCall_AnswersWhatTheTransportAnswers(t *testing.T) {
	e := newEnv(t).enableAPI()
	mountTransportOnly(e)
	tok := populate(t, e)
	auth := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	customer := `{"short_name":"LSEP","long_name":"Line\u2028Sep","vcs_group":"lsep",` +
		`"primary_contact_email":"a@lsep.example","primary_contact_name":"Al"}`
	if r := e.do(http.MethodPost, api.Prefix+"/customers", auth, customer); r.status != 201 {
		t.Fatalf("create a customer: %d %s", r.status, r.body)
	}
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name +
			`","arguments":` + args + `}}`
	}
	cases := map[string]string{
		"escaped characters":                 call("1", "get-customer", `{"customer_id":"1"}`),
		"line separator, escaped by the API": call("2", "get-customer", `{"customer_id":"2"}`),
		"projected list":                     call("3", "list-customers", `{"fields":"short_name,notes","limit":5}`),
		"model with caches":                  call("4", "get-ai-model", `{"model_id":"1"}`),
		"tool error":                         call("5", "get-customer", `{"customer_id":"999"}`),
		"bad argument":                       call("6", "get-customer", `{"customer_id":"x"}`),
		"unknown tool":                       call("7", "no-such-tool", `{}`),
		"string id":                          call(`"call-8"`, "whoami", `{}`),
		"large id":                           call("12345678901234567890", "whoami", `{}`),
		"overflowing id":                     call("1e400", "whoami", `{}`),
		"arguments not an object":            call("10", "get-customer", `"x"`),
		"progress token meta": `{"jsonrpc":"2.0","id":9,"method":"tools/call",` +
			`"params":{"name":"whoami","_meta":{"progressToken":"p"}}}`,
	}
	headers := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			headers[api.RequestIDHeader] = "req_PLAINCALLTEST" // the same id in both answers
			if !readMessage([]byte(body)).plainCall(http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}) {
				t.Fatal("not a plain call: answerCall would not answer it")
			}
			got := e.do(http.MethodPost, Path, headers, body)
			want := e.do(http.MethodPost, transportPath, headers, body)
			type answer struct {
				Status      int
				ContentType string
				Body        string
			}
			if d := cmp.Diff(answer{want.status, want.header.Get("Content-Type"), string(want.body)},
				answer{got.status, got.header.Get("Content-Type"), string(got.body)}); d != "" {
				t.Errorf("answerCall vs the transport (-transport +answerCall):\n%s", d)
			}
		})
	}
}

// TestPlainCall_OnlyLegacyToolCallRequests: answerCall takes a tools/call
// request of the legacy era with a string or number id; everything else
// goes to mcp-go's transport.
func TestPlainCall_OnlyLegacyToolCallRequests(t *testing.T) {
	const params = `"params":{"name":"whoami"}`
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call",` + params + `}`
	cases := []struct {
		name, version, body string
		want                bool
	}{
		{"no version header", "", call, true},
		{"legacy version", "2025-06-18", `{"jsonrpc":"2.0","id":"a","method":"tools/call",` + params + `}`, true},
		{"negative id", "2025-11-25", `{"jsonrpc":"2.0","id":-1,"method":"tools/call",` + params + `}`, true},
		{"modern version header", "2026-07-28", call, false},
		{"unsupported version", "1999-01-01", call, false},
		{"modern version in _meta", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami",` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false},
		{"unreadable _meta", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call",` +
			`"params":{"name":"whoami","_meta":7}}`, false},
		{"other method", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false},
		{"notification", "", `{"jsonrpc":"2.0","method":"tools/call",` + params + `}`, false},
		{"null id", "", `{"jsonrpc":"2.0","id":null,"method":"tools/call",` + params + `}`, false},
		{"object id", "", `{"jsonrpc":"2.0","id":{},"method":"tools/call",` + params + `}`, false},
		{"wrong jsonrpc", "", `{"jsonrpc":"1.0","id":1,"method":"tools/call",` + params + `}`, false},
		{"carries a result", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{},` + params + `}`,
			false},
		{"batch", "", `[{"jsonrpc":"2.0","id":1,"method":"tools/call",` + params + `}]`, false},
		{"not JSON", "", `{"jsonrpc":`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.version != "" {
				h.Set("Mcp-Protocol-Version", c.version)
			}
			if got := readMessage([]byte(c.body)).plainCall(h); got != c.want {
				t.Errorf("plainCall = %v, want %v", got, c.want)
			}
		})
	}
}

// TestMCP_CancelledNotification_OnlyTheSendersOwnCall: the server is
// stateless, so a notifications/cancelled on its own POST names a request
// id that any client may be using. It cancels a call of the token that sent
// it, never another token's call in flight.
func TestMCP_CancelledNotification_OnlyTheSendersOwnCall(t *testing.T) {
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	other := e.token(allScopes()...)
	e.api.Monitor.SetDelay(time.Second) // the call waits for the node's live state
	for _, c := range []struct {
		name, sender string
		cut          bool
	}{{"another token", other, false}, {"the same token", tok, true}} {
		t.Run(c.name, func(t *testing.T) {
			done, calls := make(chan rpcResult, 1), e.api.Monitor.Calls()
			go func() {
				done <- e.rpc(Path, tok, "tools/call", map[string]any{"name": "get-ai-node",
					"arguments": map[string]any{"hostname": "gpu-1"}}, nil)
			}()
			for e.api.Monitor.Calls() == calls { // until the call waits on the monitor
				select {
				case r := <-done:
					t.Fatalf("the call ended before it reached the monitor: %d %s", r.status, r.body)
				case <-time.After(5 * time.Millisecond):
				}
			}
			// With and without a version, a null id, and the session id the
			// caller's plain calls run under (a transport-served notification
			// would be keyed by it).
			victim := e.mcp.sessionFor(outerRequest{cred: callerOf(t, e, tok)}).SessionID()
			for _, n := range []struct{ version, id string }{{"2025-11-25", ""}, {"", ""}, {"", `"id":null,`}} {
				note := `{"jsonrpc":"2.0",` + n.id + `"method":"notifications/cancelled","params":{"requestId":1}}`
				r := e.do(http.MethodPost, Path, map[string]string{"Authorization": "Bearer " + c.sender,
					"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
					"MCP-Protocol-Version": n.version, "Mcp-Session-Id": victim}, note)
				if r.status != http.StatusAccepted {
					t.Fatalf("notifications/cancelled: %d %s", r.status, r.body)
				}
			}
			r := <-done
			var res struct {
				StructuredContent map[string]any `json:"structuredContent"`
			}
			if r.status != http.StatusOK || jsonUnmarshal(r.result, &res) != nil {
				t.Fatalf("the call: %d %s", r.status, r.body)
			}
			// Cut, the node answers without its live state (monitoring unreachable).
			if cut := res.StructuredContent["monitoring_reachable"] != true; cut != c.cut {
				t.Fatalf("call cut: %v, want %v: %s", cut, c.cut, r.body)
			}
		})
	}
}

// callerOf authenticates tok as the guard does.
func callerOf(t *testing.T, e *env, tok string) *resources.Credential {
	t.Helper()
	cred, err := e.srv.Authenticator().Authenticate(t.Context(), "Bearer "+tok, netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

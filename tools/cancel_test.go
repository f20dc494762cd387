package tools

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// Issue 18, R4: a client cancelling its own call (notifications/cancelled)
// got a tool error coded internal with status 500, as if the server had
// failed. It is request_cancelled, and no ERROR is logged.
func TestMCP_CallCancelledByItsClient_ToolErrorRequestCancelledNotInternal(t *testing.T) {
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermTenancyRead)
	tx, err := e.api.Store.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(context.Background(), "LOCK TABLE customers IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err) // the list now waits for the lock: a call in flight to cancel
	}
	done := make(chan rpcResult, 1)
	go func() {
		done <- e.rpc(Path, tok, "tools/call", map[string]any{"name": "list-customers",
			"arguments": map[string]any{}}, map[string]string{"X-Request-ID": "cancelled-call-1"})
	}()
	note := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	var r rpcResult
	testkit.Eventually(t, 0, "the call cancelled by notifications/cancelled", func() bool {
		if n := e.do(http.MethodPost, Path, map[string]string{"Authorization": "Bearer " + tok,
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, note); n.status != 202 {
			t.Fatalf("notifications/cancelled: %d %s", n.status, n.body)
		}
		select {
		case r = <-done:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	})
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := jsonUnmarshal(r.result, &res); err != nil || !res.IsError ||
		res.StructuredContent["code"] != "request_cancelled" {
		t.Fatalf("the cancelled call: %d %s", r.status, r.body)
	}
	for _, line := range strings.Split(e.api.LogText(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, "cancelled-call-1") {
			t.Fatalf("an ERROR line for a call its client cancelled: %s", line)
		}
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
			// With and without a version, a null id (an Invalid Request since
			// null ids were refused: it cancels nothing), and naming the session
			// the caller's calls run under in Mcp-Session-Id (never read).
			victim := e.mcp.sessionFor(outerRequest{cred: callerOf(t, e, tok)}).SessionID()
			for _, n := range []struct {
				version, id string
				status      int
			}{{"2025-11-25", "", 202}, {"", "", 202}, {"", `"id":null,`, 200}} {
				note := `{"jsonrpc":"2.0",` + n.id + `"method":"notifications/cancelled","params":{"requestId":1}}`
				r := e.do(http.MethodPost, Path, map[string]string{"Authorization": "Bearer " + c.sender,
					"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
					"MCP-Protocol-Version": n.version, "Mcp-Session-Id": victim}, note)
				if r.status != n.status || n.status == 200 && !contains(string(r.body), `"code":-32600`) {
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

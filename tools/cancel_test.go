package tools

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
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
	for deadline := time.Now().Add(10 * time.Second); ; {
		if n := e.do(http.MethodPost, Path, map[string]string{"Authorization": "Bearer " + tok,
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, note); n.status != 202 {
			t.Fatalf("notifications/cancelled: %d %s", n.status, n.body)
		}
		select {
		case r = <-done:
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the call was not cancelled")
			}
			continue
		}
		break
	}
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

package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// logLines decodes the server's JSON log lines whose msg is msg.
func logLines(t *testing.T, e *apitest.Env, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.LogText()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// accessSummary keeps the members of an access line that do not vary.
func accessSummary(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"level", "operation", "method", "route", "status", "token_id", "mcp_tool", "client"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func TestAccessLog_OneLinePerRequest_NeverATokenOrQuery(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead)
	var who map[string]any
	if r := e.Do("GET", "/api/v1/whoami", tok, nil); r.Status != 200 {
		t.Fatalf("whoami: %d", r.Status)
	} else {
		who = r.JSON(t)
	}
	tokenID := who["token"].(map[string]any)["id"]
	e.Do("GET", "/api/v1/customers?short_name=SECRETQUERY", tok, nil)
	e.Do("GET", "/api/v1/whoami", "svc_pat_notavalidtoken", nil)
	e.Do("GET", "/api/v1/"+tok, tok, nil) // a token pasted into a path
	lines := logLines(t, e, "request")
	var got []map[string]any
	for _, l := range lines {
		got = append(got, accessSummary(l))
		for _, k := range []string{"request_id", "duration_ms", "bytes"} {
			if _, ok := l[k]; !ok {
				t.Errorf("access line without %s: %v", k, l)
			}
		}
	}
	want := []map[string]any{
		{"level": "INFO", "operation": "get-whoami", "method": "GET", "route": "/api/v1/whoami", "status": 200.0,
			"token_id": tokenID, "client": "127.0.0.1"},
		{"level": "INFO", "operation": "list-customers", "method": "GET", "route": "/api/v1/customers", "status": 200.0,
			"token_id": tokenID, "client": "127.0.0.1"},
		{"level": "INFO", "operation": "get-whoami", "method": "GET", "route": "/api/v1/whoami", "status": 401.0,
			"client": "127.0.0.1"},
		{"level": "INFO", "operation": "unmatched", "method": "GET", "route": "/api/v1/*", "status": 404.0, "client": "127.0.0.1"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("access lines (-want +got):\n%s", d)
	}
	if logs := e.LogText(); strings.Contains(logs, tok) || strings.Contains(logs, "SECRETQUERY") {
		t.Fatalf("the log holds a token or a query value:\n%s", logs)
	}
}

// beginFails makes every keyed request an internal fault.
type beginFails struct{ resources.Idempotency }

func (beginFails) Begin(context.Context, resources.IdempotencyRequest) (resources.Begun, error) {
	return resources.Begun{}, errors.New("injected fault")
}

func TestProblemLog_InternalErrorCarriesRequestIDOnce(t *testing.T) {
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		return beginFails{st}
	}})
	tok := e.Token(resources.PermTenancyWrite)
	createCustomer(t, e, tok, acme()) // the keyed request's first run is refused: the key is claimed
	r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "k1", "X-Request-ID", "req-once")
	assertProblem(t, r, 500, "internal")
	var failed string
	for _, line := range strings.Split(e.LogText(), "\n") {
		if strings.Contains(line, `"msg":"request failed"`) {
			failed = line
		}
	}
	if n := strings.Count(failed, `"request_id"`); n != 1 || !strings.Contains(failed, `"request_id":"req-once"`) {
		t.Fatalf("request_id %d times in %q", n, failed)
	}
}

func TestClientHangUp_NotAnInternalError_Logged499(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead)
	e.Do("GET", "/api/v1/whoami", tok, nil) // the API switch is read and cached
	ctx := context.Background()
	tx, err := e.Store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "LOCK TABLE customers IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, "GET", e.HTTP.URL+"/api/v1/customers", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if res, err := e.HTTP.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the locked list answered %d", res.StatusCode)
	}
	line := accessLine(t, e, "list-customers")
	if line["status"] != 499.0 || line["client_closed"] != true || line["level"] != "INFO" {
		t.Fatalf("access line of the abandoned request: %v", line)
	}
	if logs := e.LogText(); strings.Contains(logs, `"level":"ERROR"`) || strings.Contains(logs, `"code":"internal"`) {
		t.Fatalf("a client hang-up was logged as an internal error:\n%s", logs)
	}
}

// TestStalledBody_Logged408NotClientClosed: a body cut off by the read
// deadline is answered 408, and the access line and the metrics say 408:
// the client did not hang up (net/http's failed read cancels the context).
func TestStalledBody_Logged408NotClientClosed(t *testing.T) {
	e := apitest.New(t, apitest.Options{BodyReadTimeout: 300 * time.Millisecond})
	tok := e.Token(resources.PermTenancyWrite)
	if res := stallBody(t, e, tok, ""); res.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d", res.StatusCode)
	}
	line := accessLine(t, e, "create-customer")
	if line["status"] != 408.0 || line["client_closed"] != nil {
		t.Fatalf("access line of the stalled request: %v", line)
	}
}

// accessLine waits for the access-log line of an operation's request and
// returns the last one written.
func accessLine(t *testing.T, e *apitest.Env, op string) map[string]any {
	t.Helper()
	var line map[string]any
	testkit.Eventually(t, 0, "the access line of "+op, func() bool {
		for _, l := range logLines(t, e, "request") {
			if l["operation"] == op {
				line = l
			}
		}
		return line != nil
	})
	return line
}

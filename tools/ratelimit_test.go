package tools

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// frozenEnv is an env whose rate limiter's clock never moves (no refill).
func frozenEnv(t *testing.T) *env {
	clock := func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	return newEnv(t, func(o *apitest.Options, _ *Config) {
		o.Limiter = api.NewLocalLimiter(api.RatePerMinute, clock)
	}).enableAPI()
}

// rateHeaders are the rate-limit headers of an answer.
func rateHeaders(r rpcResult) [3]string {
	return [3]string{r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Remaining"), r.header.Get("RateLimit-Policy")}
}

var metaCall = map[string]any{"name": "get-meta", "arguments": map[string]any{}}

func TestMCP_RateLimit_MessageCostsOne_ToolCallTwo_HeadersAsREST(t *testing.T) {
	t.Parallel()
	e := frozenEnv(t)
	tok := e.token(resources.PermAuditRead)
	steps := []struct {
		method    string
		params    any
		remaining string
	}{
		{"initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "t", "version": "1"}}, "599"},
		{"tools/list", map[string]any{}, "598"},
		{"ping", map[string]any{}, "597"},
		{"tools/call", metaCall, "595"},
	}
	for _, st := range steps {
		r := e.rpc(Path, tok, st.method, st.params, nil)
		if r.status != http.StatusOK || r.result == nil {
			t.Fatalf("%s: %d %s", st.method, r.status, r.body)
		}
		if diff := cmp.Diff([3]string{"600", st.remaining, "600;w=60"}, rateHeaders(r)); diff != "" {
			t.Fatalf("%s: rate headers (-want +got):\n%s", st.method, diff)
		}
	}
	rest := e.do(http.MethodGet, api.Prefix+"/meta", map[string]string{"Authorization": "Bearer " + tok}, "")
	if diff := cmp.Diff([3]string{"600", "594", "600;w=60"}, rateHeaders(rpcResult{response: rest})); diff != "" {
		t.Fatalf("REST rate headers (-want +got):\n%s", diff)
	}
}

// TestMCP_RateLimit_RefusedCallIsToolErrorWithRetryAfter spends the budget:
// a tool call needs both of its units at its POST, so with one unit left it
// is refused and takes nothing (a ping still passes); a refused call is a
// tool error carrying rate_limited and retry_after_seconds, and the HTTP
// answer carries Retry-After; any other refused message is a 429 problem.
func TestMCP_RateLimit_RefusedCallIsToolErrorWithRetryAfter(t *testing.T) {
	t.Parallel()
	e := frozenEnv(t)
	tok := e.token(resources.PermAuditRead)
	e.rpc(Path, tok, "ping", map[string]any{}, nil) // 599 left: calls of 2 end on 1
	for i := range (api.RatePerMinute - 2) / 2 {
		if r := e.rpc(Path, tok, "tools/call", metaCall, nil); r.header.Get("RateLimit-Remaining") == "" || r.status != 200 {
			t.Fatalf("call %d: %d %s", i, r.status, r.body)
		}
	}
	for _, left := range []string{"1", "0"} {
		r := e.rpc(Path, tok, "tools/call", metaCall, nil)
		var res struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		}
		if err := jsonUnmarshal(r.result, &res); err != nil || !res.IsError {
			t.Fatalf("%s left: %d %s", left, r.status, r.body)
		}
		p := res.StructuredContent
		// The detail points at what an agent sees (retry_after_seconds), not
		// only at an HTTP header its client may hide.
		detail, _ := p["detail"].(string)
		if r.status != http.StatusOK || p["code"] != resources.CodeRateLimited || p["retry_after_seconds"] == nil ||
			r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Remaining") != left ||
			!strings.Contains(detail, "retry_after_seconds") {
			t.Fatalf("%s left: %d %v %v", left, r.status, r.header, p)
		}
		if left == "1" { // the refused call took nothing: the last unit pays a ping
			if r := e.rpc(Path, tok, "ping", map[string]any{}, nil); r.status != http.StatusOK ||
				r.header.Get("RateLimit-Remaining") != "0" {
				t.Fatalf("ping on the last unit: %d %v", r.status, r.header)
			}
		}
	}
	r := e.rpc(Path, tok, "tools/list", map[string]any{}, nil)
	p := wantProblem(t, r.response, http.StatusTooManyRequests, resources.CodeRateLimited)
	if p["retry_after_seconds"] == nil || r.header.Get("Retry-After") == "" {
		t.Fatalf("tools/list refused: %v %v", r.header, p)
	}
}

// TestMCP_OneTokenLookupPerCall: the tool call's in-process GET reuses the
// credential its POST authenticated.
func TestMCP_OneTokenLookupPerCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	before := e.api.Lookups.Count()
	if r := e.rpc(Path, tok, "tools/call", map[string]any{"name": "list-audit-events", "arguments": map[string]any{}}, nil); r.result == nil {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if n := e.api.Lookups.Count() - before; n != 1 {
		t.Fatalf("%d token lookups for one tool call", n)
	}
}

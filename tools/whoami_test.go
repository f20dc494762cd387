package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/api/sharedcache"
	"platformapi/api/sharedcache/redistest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// budgetPerMinute is the small budget of the rate tests: a few calls spend
// it, and Redis's GCRA refills one unit every 5 s, more than such a test
// takes.
const budgetPerMinute = 12

// rateAnswer is what one answer says of the token's budget: its
// RateLimit-Remaining header, its _meta (MCP) and its body's rate_limit
// (GET /whoami).
type rateAnswer struct {
	header     string
	meta, body *api.RateStatus
	isError    bool
	code       string
}

// rateOf reads the budget of an MCP tool call's answer.
func rateOf(t *testing.T, r rpcResult) rateAnswer {
	t.Helper()
	var res struct {
		Meta map[string]*api.RateStatus `json:"_meta"`
		// Structured content: a problem's code or whoami's rate_limit.
		StructuredContent struct {
			Code      string          `json:"code"`
			RateLimit *api.RateStatus `json:"rate_limit"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if r.result == nil || json.Unmarshal(r.result, &res) != nil {
		t.Fatalf("not a tool result: %d %s", r.status, r.body)
	}
	return rateAnswer{header: r.header.Get("RateLimit-Remaining"), meta: res.Meta[RateMetaKey],
		body: res.StructuredContent.RateLimit, isError: res.IsError, code: res.StructuredContent.Code}
}

// budgetAfter is the budget of budgetPerMinute once spent units are gone.
func budgetAfter(spent int) *api.RateStatus {
	return &api.RateStatus{Limit: budgetPerMinute, Remaining: budgetPerMinute - spent,
		ResetSeconds: spent * 60 / budgetPerMinute}
}

// redisLimiter is a Redis-shared limiter of budgetPerMinute, healthy.
func redisLimiter(t *testing.T) api.RateLimiter {
	srv := redistest.Start(t)
	s, err := sharedcache.New(sharedcache.Options{URL: srv.URL(), PerMinute: budgetPerMinute,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, nopSink{}); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = s.Close() })
	testkit.Eventually(t, 0, "Redis is healthy", s.Healthy)
	return s
}

// nopSink ignores the change feed.
type nopSink struct{}

func (nopSink) Changed(resources.Change) {}
func (nopSink) Resync()                  {}

// TestMCP_RateBudget_EveryResultCarriesItAfterItsCharge_AsTheHeadersSay: with
// either limiter (in-process, Redis-shared), GET /whoami's rate_limit, a
// tool result's _meta (success and tool error alike: not found, forbidden,
// a missing argument) and the RateLimit-Remaining header of the same answer
// show one budget, after that answer's charge: one unit for REST, two for
// a tool call; a call refused for want of units says what is left too.
func TestMCP_RateBudget_EveryResultCarriesItAfterItsCharge_AsTheHeadersSay(t *testing.T) {
	frozen := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for name, limiter := range map[string]func(*testing.T) api.RateLimiter{
		"in-process": func(*testing.T) api.RateLimiter {
			return api.NewLocalLimiter(budgetPerMinute, func() time.Time { return frozen })
		},
		"Redis": redisLimiter,
	} {
		t.Run(name, func(t *testing.T) {
			l := limiter(t)
			e := newEnv(t, func(o *apitest.Options, _ *Config) { o.Limiter = l }).enableAPI()
			checkBudgetRoad(t, e, name == "Redis")
		})
	}
}

// checkBudgetRoad plays the calls of the rate budget test; shared: Redis's
// GCRA, whose remaining may be rounded down by one (floating point).
func checkBudgetRoad(t *testing.T, e *env, shared bool) {
	tok := e.token(resources.PermAuditRead)
	rest := e.do(http.MethodGet, api.Prefix+"/whoami", authorized(tok), "")
	var who struct {
		RateLimit *api.RateStatus `json:"rate_limit"`
	}
	if err := json.Unmarshal(rest.body, &who); err != nil || rest.status != http.StatusOK {
		t.Fatalf("REST whoami: %d %s", rest.status, rest.body)
	}
	restRate := rateAnswer{header: rest.header.Get("RateLimit-Remaining"), meta: who.RateLimit,
		body: who.RateLimit}
	checkRate(t, "REST whoami", restRate, 1, shared)
	spent := 1
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"get-whoami", nil, ""},
		{"get-meta", nil, ""},
		{"get-audit-event", map[string]any{"event_id": "999999"}, resources.CodeAuditEventNotFound},
		{"list-customers", nil, resources.CodeForbidden},
		{"get-project", nil, api.CodeInvalidParameter},
	} {
		spent += 2
		params := map[string]any{"name": c.tool, "arguments": c.args}
		a := rateOf(t, e.rpc(Path, tok, "tools/call", params, nil))
		if a.code != c.code || a.isError != (c.code != "") {
			t.Fatalf("%s: error %v, code %q, want %q", c.tool, a.isError, a.code, c.code)
		}
		if c.tool != "get-whoami" {
			a.body = a.meta // only whoami's answer holds the budget
		}
		checkRate(t, c.tool, a, spent, shared)
	}
	a := rateOf(t, e.rpc(Path, tok, "tools/call", map[string]any{"name": "get-meta"}, nil))
	if a.code != resources.CodeRateLimited || a.meta == nil || a.meta.Remaining > 1 ||
		strconv.Itoa(a.meta.Remaining) != a.header {
		t.Fatalf("refused call: %+v, _meta %+v", a, a.meta)
	}
}

// checkRate compares an answer's budget with the budget once spent units
// are gone: its _meta (or body) and its body equal, and its header says the
// same remaining.
func checkRate(t *testing.T, what string, a rateAnswer, spent int, shared bool) {
	t.Helper()
	want := budgetAfter(spent)
	if shared && a.meta != nil && a.meta.Remaining == want.Remaining-1 { // GCRA's rounding
		want = budgetAfter(spent + 1)
	}
	if d := cmp.Diff(want, a.meta); d != "" {
		t.Fatalf("%s: budget (-want +got):\n%s", what, d)
	}
	if d := cmp.Diff(a.meta, a.body); d != "" || a.header != strconv.Itoa(want.Remaining) {
		t.Fatalf("%s: header %s, _meta and body (-_meta +body):\n%s", what, a.header, d)
	}
}

// TestMCP_Whoami_NowIsTheServersClock_FrozenOrMoved: get-whoami's now is
// the server's clock (the test's, frozen, then moved by two days), not the
// machine's, over MCP and REST alike.
func TestMCP_Whoami_NowIsTheServersClock_FrozenOrMoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	for _, step := range []time.Duration{0, 49 * time.Hour} {
		e.api.Clock.Advance(step)
		var who struct {
			Now time.Time `json:"now"`
		}
		r := e.rpc(Path, tok, "tools/call", map[string]any{"name": "get-whoami"}, nil)
		var res struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		err := json.Unmarshal(r.result, &res)
		if err != nil || json.Unmarshal(res.StructuredContent, &who) != nil {
			t.Fatalf("get-whoami: %d %s", r.status, r.body)
		}
		rest := e.do(http.MethodGet, api.Prefix+"/whoami", authorized(tok), "")
		var viaREST struct {
			Now time.Time `json:"now"`
		}
		if err := json.Unmarshal(rest.body, &viaREST); err != nil {
			t.Fatal(err)
		}
		want := e.api.Clock.Now()
		if !who.Now.Equal(want) || !viaREST.Now.Equal(want) || who.Now.Location() != time.UTC {
			t.Fatalf("after %v: now %v (MCP), %v (REST); the server's clock says %v", step, who.Now,
				viaREST.Now, want)
		}
	}
}

// authorized is the Authorization header of token.
func authorized(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

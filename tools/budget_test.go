package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"

	"platformapi/api"
	"platformapi/resources"
)

// restKeys lists every item's key of a REST list, following next_cursor.
func restKeys(t *testing.T, e *env, tok, path string, query url.Values, key string) []string {
	t.Helper()
	var out []string
	for {
		r := e.do(http.MethodGet, api.Prefix+path+"?"+query.Encode(), map[string]string{"Authorization": "Bearer " + tok}, "")
		page := r.json(t)
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any)[key].(string))
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return out
		}
		query.Set("cursor", next)
	}
}

// walk follows a list tool from the first page to the end and returns the
// items' keys, the largest page in estimated tokens and how many pages the
// budget cut short.
func walk(t *testing.T, c *client.Client, tool string, args map[string]any, key string) ([]string, int, int) {
	t.Helper()
	var keys []string
	largest, cut := 0, 0
	for page := 0; ; page++ {
		res := call(t, c, tool, args)
		if res.IsError {
			t.Fatalf("%s page %d: %s", tool, page, resultText(t, res))
		}
		largest = max(largest, api.EstimateTokens(len(resultText(t, res))))
		body := res.StructuredContent.(map[string]any)
		items := body["items"].([]any)
		for _, it := range items {
			keys = append(keys, it.(map[string]any)[key].(string))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			return keys, largest, cut
		}
		if limit, ok := args["limit"].(int); (ok && len(items) < limit) || (!ok && len(items) < resources.DefaultPageLimit) {
			cut++
		}
		args = cloneWith(args, "cursor", next)
	}
}

func cloneWith(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for kk, vv := range m {
		if kk != k {
			out[kk] = vv
		}
	}
	return out
}

// TestMCP_BudgetCutPages_WalkSkipsAndRepeatsNothing walks big lists at
// default and explicit limits, in the default and a non-default sort: every
// page fits its budget, some pages are cut short, and the keys are exactly
// REST's, in order.
func TestMCP_BudgetCutPages_WalkSkipsAndRepeatsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	bigWorld(t, e)
	c := e.client(tok, nil, false)
	for _, tc := range []struct {
		tool, path, key string
		args            map[string]any
		budget          int
	}{
		{"list-audit-events", "/audit-events", "id", map[string]any{}, api.DefaultPageBudget},
		{"list-audit-events", "/audit-events", "id", map[string]any{"limit": 500}, api.MaxResultBudget},
		{"list-ai-models", "/ai/models", "id", map[string]any{"sort": "size_gb", "order": "desc"}, api.DefaultPageBudget},
		{"list-ai-models", "/ai/models", "id", map[string]any{"sort": "size_gb", "limit": 200}, api.MaxResultBudget},
		{"list-operations", "/operations", "id", map[string]any{}, api.DefaultPageBudget},
		{"list-operations", "/operations", "id", map[string]any{"limit": 200}, api.MaxResultBudget},
		{"list-fleet-release-operations", "/release-operations", "id", map[string]any{}, api.DefaultPageBudget},
		{"list-fleet-release-operations", "/release-operations", "id", map[string]any{"limit": 200},
			api.MaxResultBudget},
	} {
		t.Run(fmt.Sprint(tc.tool, tc.args), func(t *testing.T) {
			got, largest, cut := walk(t, c, tc.tool, tc.args, tc.key)
			q := url.Values{"limit": {"200"}}
			for k, v := range tc.args {
				if k != "limit" {
					q.Set(k, fmt.Sprint(v))
				}
			}
			want := restKeys(t, e, tok, tc.path, q, tc.key)
			if diff := cmp.Diff(want, got); diff != "" || len(want) < 300 {
				t.Fatalf("%d keys over MCP, %d over REST (-REST +MCP):\n%s", len(got), len(want), diff)
			}
			if largest > tc.budget || cut == 0 {
				t.Fatalf("largest page %d estimated tokens (budget %d), %d pages cut", largest, tc.budget, cut)
			}
			t.Logf("%d items, largest page %d estimated tokens, %d pages cut by the budget", len(got), largest, cut)
		})
	}
}

// TestMCP_ListToolSizes_DefaultAndMaximumArguments measures every list tool
// on a big world at its default arguments (at most 8,000 estimated tokens)
// and at limit=max (at most 25,000).
func TestMCP_ListToolSizes_DefaultAndMaximumArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	bigWorld(t, e)
	c := e.client(tok, nil, false)
	for _, tl := range e.mcp.Tools() {
		spec := e.mcp.byName[tl.Name]
		if !spec.list {
			continue
		}
		maxLimit := 200
		if tl.Name == "list-audit-events" {
			maxLimit = 500
		}
		sizes := [2]int{}
		calls := []map[string]any{toolArgs[tl.Name], cloneWith(toolArgs[tl.Name], "limit", maxLimit)}
		if !slices.ContainsFunc(spec.params, func(p param) bool { return p.name == "limit" }) {
			calls, maxLimit = calls[:1], 0 // never paged
		}
		for i, args := range calls {
			if tl.Name == "list-ai-nodes" {
				delete(args, "model")
			}
			res := call(t, c, tl.Name, args)
			if res.IsError {
				t.Fatalf("%s %v: %s", tl.Name, args, resultText(t, res))
			}
			sizes[i] = api.EstimateTokens(len(resultText(t, res)))
		}
		t.Logf("%-26s default %5d  limit=%d %6d estimated tokens", tl.Name, sizes[0], maxLimit, sizes[1])
		if sizes[0] > api.DefaultPageBudget || sizes[1] > api.MaxResultBudget {
			t.Errorf("%s: %v over budget", tl.Name, sizes)
		}
	}
}

// TestMCP_OversizedRecord_ResultTooLargeWithTheWayOut: an audit event whose
// states pass 25,000 estimated tokens is refused by get-audit-event (pointing
// to list-audit-events) and, as the first item of a page, by
// list-audit-events (pointing to fields); fields reads it. A catalogue row
// over 8,000 fits only with an explicit limit.
func TestMCP_OversizedRecord_ResultTooLargeWithTheWayOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	insertOversized(t, e)
	c := e.client(tok, nil, false)
	id := restKeys(t, e, tok, "/audit-events", url.Values{"action": {"big.change"}, "fields": {"action"}}, "id")[0]
	p := problemOf(t, call(t, c, "get-audit-event", map[string]any{"event_id": id}))
	if p["code"] != resources.CodeResultTooLarge || p["next_tool"] != "list-audit-events" {
		t.Fatalf("get-audit-event: %v", p)
	}
	p = problemOf(t, call(t, c, "list-audit-events", nil))
	if p["code"] != resources.CodeResultTooLarge || p["field"] != "fields" {
		t.Fatalf("list-audit-events: %v", p)
	}
	res := call(t, c, "list-audit-events", map[string]any{"fields": "actor,action"})
	if items := res.StructuredContent.(map[string]any)["items"].([]any); res.IsError || items[0].(map[string]any)["id"] != id {
		t.Fatalf("with fields: %s", resultText(t, res))
	}
	p = problemOf(t, call(t, c, "list-ai-models", nil))
	if p["code"] != resources.CodeResultTooLarge || !slices.Contains([]any{"fields"}, p["field"]) {
		t.Fatalf("list-ai-models default: %v", p)
	}
	if res := call(t, c, "list-ai-models", map[string]any{"limit": 10}); res.IsError {
		t.Fatalf("list-ai-models limit=10: %s", resultText(t, res))
	}
}

// insertOversized writes the newest audit event, about 30,000 estimated
// tokens (over every budget), and the only AI model, about 10,500 (over
// the budget of a list called without limit, within 25,000).
func insertOversized(t *testing.T, e *env) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO audit_events (occurred_at, actor, action, entity_type, entity_id, after_state)
		 VALUES (now() + interval '1 hour', 'big@example.test', 'big.change', 'bulk', 'b1',
		         jsonb_build_object('text', repeat('y', 120000)))`,
		`INSERT INTO ai_models (repo, display_name, description, notes, summary)
		 VALUES ('big/model', 'Big', repeat('d', 20000), repeat('n', 20000), repeat('s', 2000))`,
	} {
		if _, err := e.api.Store.DB().ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// Audit E6: the result_too_large of a page's first item offers "pass limit
// explicitly for a budget of 25000" only when the item would fit that
// budget; an item over every budget is read only with fields (the detail
// sent the agent to a limit that answered result_too_large again).
func TestMCP_FirstItemOverEveryBudget_DetailOffersFieldsNotLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	insertOversized(t, e)
	c := e.client(e.token(allScopes()...), nil, false)
	const limit = "pass limit explicitly for a budget of 25000"
	for _, tc := range []struct {
		tool        string
		args        map[string]any
		offersLimit bool
	}{
		{"list-audit-events", nil, false},
		{"list-audit-events", map[string]any{"limit": 50}, false},
		{"list-ai-models", nil, true},
	} {
		p := problemOf(t, call(t, c, tc.tool, tc.args))
		d, _ := p["detail"].(string)
		if p["code"] != resources.CodeResultTooLarge || !strings.Contains(d, "pass fields") ||
			strings.Contains(d, limit) != tc.offersLimit {
			t.Errorf("%s %v: %q", tc.tool, tc.args, d)
		}
	}
}

// A single record over the budget says how to read it: the detail names the
// members to leave out (largest first, until the rest fits a list's default
// page) and the record's own REST path, not its template; the hint names
// the list tool once (it said "call list-audit-events with fields …; call
// list-audit-events").
func TestMCP_OversizedRecord_NamesMembersToLeaveOutAndItsPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	insertOversized(t, e)
	c := e.client(tok, nil, false)
	q := url.Values{"action": {"big.change"}, "fields": {"action"}}
	id := restKeys(t, e, tok, "/audit-events", q, "id")[0]
	p := problemOf(t, call(t, c, "get-audit-event", map[string]any{"event_id": id}))
	got := map[string]any{"code": p["code"], "next_tool": p["next_tool"], "hint": p["hint"]}
	want := map[string]any{"code": resources.CodeResultTooLarge, "next_tool": "list-audit-events",
		"hint": "call list-audit-events with fields naming the members you need, " +
			"without those the detail names"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("get-audit-event (-want +got):\n%s", d)
	}
	detail, _ := p["detail"].(string)
	for _, part := range []string{"leave out after_state", "GET /api/v1/audit-events/" + id} {
		if !strings.Contains(detail, part) {
			t.Errorf("detail %q lacks %q", detail, part)
		}
	}
}

package tools

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/resources"
)

// TestMCP_ToolsList_WithinTokenBudget measures tools/list (bytes/4) for a
// token with every scope (at most 15,000 estimated tokens), for each
// toolset of it and for each scope alone, and writes the figures into the
// README.
func TestMCP_ToolsList_WithinTokenBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	every := e.token(allScopes()...)
	all := e.listFigures(t, Path, every)
	byToolset := map[string]listFigures{}
	for _, ts := range api.Toolsets() {
		byToolset[ts] = e.listFigures(t, Path+"?toolsets="+ts, every)
	}
	var byScope []scopeFigures
	for _, scope := range allScopes() {
		byScope = append(byScope, scopeFigures{scope, e.listFigures(t, Path, e.token(scope))})
	}
	t.Logf("tools/list: every scope %d tools, %d estimated tokens", len(all.tools), all.tokens)
	syncMCPReadme(t, all, byToolset, byScope)
	if all.tokens > 15_000 {
		t.Fatalf("tools/list for every scope is %d estimated tokens, over 15,000", all.tokens)
	}
}

func TestMCP_ToolsList_OnlyToolsTheScopesCanCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	r := e.rpc(Path, e.token(resources.PermAIRead), "tools/list", map[string]any{}, nil)
	want := []string{"get-ai-gateway", "get-ai-model", "get-ai-node", "get-meta", "get-operation", "get-whoami",
		"list-ai-gateway-tiers", "list-ai-models", "list-ai-nodes", "list-node-caches", "list-operations",
		"list-permissions"}
	if diff := cmp.Diff(want, toolNames(t, r.result)); diff != "" {
		t.Fatalf("ai-read-global tools (-want +got):\n%s", diff)
	}
}

func TestMCP_ToolsList_NarrowedToToolsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	for _, tc := range []struct {
		name, path string
		headers    map[string]string
		want       []string
	}{
		{"query", Path + "?toolsets=audit,releases", nil, []string{"get-audit-event", "get-prod-lock",
			"get-release-operation", "get-release-state", "list-audit-events", "list-fleet-release-operations",
			"list-release-operations"}},
		{"header", Path, map[string]string{ToolsetsHeader: "identity"}, []string{"get-api-token", "get-meta",
			"get-whoami", "list-api-tokens", "list-permissions", "list-service-accounts"}},
		{"query wins", Path + "?toolsets=audit", map[string]string{ToolsetsHeader: "identity"},
			[]string{"get-audit-event", "list-audit-events"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.rpc(tc.path, tok, "tools/list", map[string]any{}, tc.headers)
			if diff := cmp.Diff(tc.want, toolNames(t, r.result)); diff != "" {
				t.Fatalf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMCP_UnknownToolset_400(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAIRead)
	for _, r := range []rpcResult{
		e.rpc(Path+"?toolsets=ai,bogus", tok, "tools/list", map[string]any{}, nil),
		e.rpc(Path, tok, "tools/list", map[string]any{}, map[string]string{ToolsetsHeader: "nope"}),
	} {
		p := wantProblem(t, r.response, http.StatusBadRequest, api.CodeInvalidParameter)
		if p["field"] != "toolsets" || !containsAll(p["detail"].(string), api.Toolsets()) {
			t.Fatalf("problem %v", p)
		}
	}
}

// Audit E2: a toolset selection is read as strictly as a REST parameter.
// One that names no toolset (hid every tool), a query that does not parse
// (was ignored: every tool shown) and the parameter or the header given
// twice (the second was dropped) are 400 invalid_parameter, field toolsets,
// like an unknown name.
func TestMCP_ToolsetSelection_NamingNothingRepeatedOrBadlyEncoded_400(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(allScopes()...)
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	header := func(v string) map[string]string { return map[string]string{ToolsetsHeader: v} }
	for _, tc := range []struct {
		name, path string
		headers    map[string]string
		want       string
	}{
		{"a comma", Path + "?toolsets=,", nil, "names no toolset"},
		{"commas and spaces", Path + "?toolsets=%20,%20,", nil, "names no toolset"},
		{"empty", Path + "?toolsets=", header("ai"), "names no toolset"},
		{"a comma in the header", Path, header(","), "names no toolset"},
		{"bad percent-encoding", Path + "?toolsets=%zz", nil, "percent-encod"},
		{"bad percent-encoding elsewhere", Path + "?toolsets=ai&x=%zz", nil, "percent-encod"},
		{"the parameter twice", Path + "?toolsets=ai&toolsets=audit", nil, "given 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := wantProblem(t, e.post(tc.path, tok, list, tc.headers), http.StatusBadRequest,
				api.CodeInvalidParameter)
			if p["field"] != "toolsets" || !strings.Contains(p["detail"].(string), tc.want) {
				t.Fatalf("problem %v", p)
			}
		})
	}
	t.Run("the header twice", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.ts.URL+Path,
			strings.NewReader(list))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Add(ToolsetsHeader, "ai")
		req.Header.Add(ToolsetsHeader, "audit")
		res, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		p := wantProblem(t, response{res.StatusCode, res.Header, body}, http.StatusBadRequest,
			api.CodeInvalidParameter)
		if p["field"] != "toolsets" || !strings.Contains(p["detail"].(string), "given 2 times") {
			t.Fatalf("problem %v", p)
		}
	})
}

// TestMCP_HiddenToolStillAnswersItsProblem: a tool tools/list hides from a
// token is still callable and answers REST's 403 with the keys required
// and the remedy, as its structured content; no tool to call next.
func TestMCP_HiddenToolStillAnswersItsProblem(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAIRead), nil, false)
	for tool, want := range map[string]map[string]any{
		"list-audit-events": {"required": []any{resources.PermAuditRead},
			"remedy": "Ask an administrator for a token with audit-read-global."},
		"list-customers": {"required": []any{resources.PermTenancyRead, resources.PermTenancyWrite},
			"remedy": "Ask an administrator for a token with any one of: tenancy-read-global, " +
				"tenancy-write-global."},
	} {
		p := problemOf(t, call(t, c, tool, nil))
		got := map[string]any{"required": p["required"], "remedy": p["remedy"]}
		d := cmp.Diff(want, got)
		if d != "" || p["code"] != resources.CodeForbidden || p["next_tool"] != nil {
			t.Fatalf("%s: %v (-want +got):\n%s", tool, p, d)
		}
	}
}

func containsAll(s string, parts []string) bool {
	return !slices.ContainsFunc(parts, func(p string) bool { return !contains(s, p) })
}

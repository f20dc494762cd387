package tools

import (
	"fmt"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
)

// listFigures are the tools a tools/list answers and its estimated tokens.
type listFigures struct {
	tools  []string
	tokens int
}

// scopeFigures are the tools/list figures of a token holding one scope.
type scopeFigures struct {
	scope string
	listFigures
}

// listFigures calls tools/list at path with tok and measures the result.
func (e *env) listFigures(t *testing.T, path, tok string) listFigures {
	t.Helper()
	r := e.rpc(path, tok, "tools/list", map[string]any{}, nil)
	if r.result == nil {
		t.Fatalf("tools/list %s: %d %s", path, r.status, r.body)
	}
	return listFigures{toolNames(t, r.result), api.EstimateTokens(len(r.result))}
}

// mcpTable is the README's table of MCP toolsets: each toolset with the
// tools it holds for a token with every scope and their tools/list tokens.
func mcpTable(byToolset map[string]listFigures) string {
	var b strings.Builder
	b.WriteString("| toolset | estimated tokens | tools |\n|---|---|---|\n")
	for _, ts := range api.Toolsets() {
		f := byToolset[ts]
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", ts, f.tokens, "`"+strings.Join(f.tools, "`, `")+"`")
	}
	return b.String()
}

// mcpFigures is the README's tools/list figures: every scope, then each
// scope alone.
func mcpFigures(all listFigures, byScope []scopeFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`tools/list` for a token with every scope: %d tools, %d estimated tokens "+
		"(the budget is 15,000). For a token with one scope:\n\n", len(all.tools), all.tokens)
	b.WriteString("| scope | tools | estimated tokens |\n|---|---|---|\n")
	for _, s := range byScope {
		fmt.Fprintf(&b, "| `%s` | %d | %d |\n", s.scope, len(s.tools), s.tokens)
	}
	return b.String()
}

// syncMCPReadme keeps the README's MCP table and figures true (see
// apitest.SyncREADMEPart).
func syncMCPReadme(t *testing.T, all listFigures, byToolset map[string]listFigures,
	byScope []scopeFigures) {
	apitest.SyncREADMEPart(t, "../README.md", "mcp toolsets", mcpTable(byToolset))
	apitest.SyncREADMEPart(t, "../README.md", "mcp figures", mcpFigures(all, byScope))
}

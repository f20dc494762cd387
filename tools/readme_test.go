package tools

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
)

// mcpTable is the README's table of MCP toolsets: each toolset with the
// tools it holds (those of a token with every scope), from the operations'
// declarations.
func mcpTable(e *env, tools []string) string {
	byToolset := map[string][]string{}
	for _, item := range e.srv.API().OpenAPI().Paths {
		if item.Get == nil || !slices.Contains(tools, item.Get.OperationID) {
			continue
		}
		ts, _ := item.Get.Extensions[api.ExtToolset].(string)
		byToolset[ts] = append(byToolset[ts], item.Get.OperationID)
	}
	var b strings.Builder
	b.WriteString("| toolset | tools |\n|---|---|\n")
	for _, ts := range api.Toolsets() {
		names := byToolset[ts]
		slices.Sort(names)
		fmt.Fprintf(&b, "| `%s` | %s |\n", ts, "`"+strings.Join(names, "`, `")+"`")
	}
	return b.String()
}

// mcpFigures is the README's line of tools/list figures.
func mcpFigures(all, allTok, ai, aiTok int) string {
	return fmt.Sprintf("`tools/list` for a token with every scope: %d tools, %d estimated tokens (the budget is "+
		"15,000); for `ai-read-global` alone: %d tools, %d estimated tokens.\n", all, allTok, ai, aiTok)
}

// syncMCPReadme keeps the README's MCP table and figures true (see
// apitest.SyncREADMEPart).
func syncMCPReadme(t *testing.T, e *env, tools []string, figures string) {
	apitest.SyncREADMEPart(t, "../README.md", "mcp toolsets", mcpTable(e, tools))
	apitest.SyncREADMEPart(t, "../README.md", "mcp figures", figures)
}

package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
)

// endpointsTable is the README's table of the operations: one row per
// declared api.Op with its method and path, operation id, the permission its
// declaration implies and its Notes. The rows are in registration order
// (Server.Ops): the areas in registerOperations' order, and within an area
// the order its file registers them in, a collection's list and create
// before the operations on one item.
func endpointsTable(ops []api.Op) string {
	var b strings.Builder
	b.WriteString("| method and path | operation id | permission (any one) | notes |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, op := range ops {
		notes := " " // an empty cell is "| |"
		if op.Notes != "" {
			notes = " " + strings.ReplaceAll(op.Notes, "|", `\|`) + " "
		}
		fmt.Fprintf(&b, "| %s %s | `%s` | %s |%s|\n", op.Method, op.Path, op.ID,
			permissionCell(op), notes)
	}
	return b.String()
}

// permissionCell is the endpoint table's permission of op: "none (no
// token)" when public, "any token" without keys, else the keys of which any
// one suffices; "+ Allow destroy" when the token also needs that.
func permissionCell(op api.Op) string {
	p := "any token"
	switch {
	case op.Public:
		p = "none (no token)"
	case len(op.Permissions) > 0:
		p = "`" + strings.Join(op.Permissions, "`, `") + "`"
	}
	if op.Destroy {
		p += " + Allow destroy"
	}
	return p
}

// servedOperations lists every operation of the OpenAPI document as
// "METHOD path id", sorted.
func servedOperations(doc *huma.OpenAPI) []string {
	var served []string
	for op := range api.Operations(doc) {
		served = append(served, op.Method+" "+op.Path+" "+op.OperationID)
	}
	slices.Sort(served)
	return served
}

// TestREADME_EndpointTableIsTheDeclarations: the README's table of the
// operations is generated from their declarations (see endpointsTable),
// every row exactly, and every operation of the OpenAPI document is a
// declared Op, once. The routes that are not operations (docs, probes,
// metrics, MCP) are the hand-kept table after it.
func TestREADME_EndpointTableIsTheDeclarations(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ops := e.Server.Ops()
	var declared []string
	for _, op := range ops {
		declared = append(declared, op.Method+" "+op.Path+" "+op.ID)
	}
	slices.Sort(declared)
	if diff := cmp.Diff(servedOperations(e.Server.API().OpenAPI()), declared); diff != "" {
		t.Errorf("served operations vs declared Ops (-served +declared):\n%s", diff)
	}
	apitest.SyncREADMEPart(t, "../README.md", "endpoints table", endpointsTable(ops))
}

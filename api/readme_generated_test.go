package api_test

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// errorsTable is the README's Errors table: every code of the catalogue
// with its status (or kind), meaning and whether a retry helps, by status
// (warnings and operation errors last), then code.
func errorsTable() string {
	codes := resources.Problems()
	rank := func(c resources.ProblemCode) int {
		switch c.Kind {
		case resources.CodeKindWarning:
			return 1000
		case resources.CodeKindOperationError:
			return 1001
		}
		return c.Status
	}
	slices.SortStableFunc(codes, func(a, b resources.ProblemCode) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.Code, b.Code))
	})
	var b strings.Builder
	b.WriteString("| code | status | meaning | retry |\n|---|---|---|---|\n")
	for _, c := range codes {
		status, retry := c.Kind, ""
		if c.Status != 0 {
			status = strconv.Itoa(c.Status)
		}
		if c.Retry {
			retry = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.Code, status, c.Meaning, retry)
	}
	return b.String()
}

// TestREADME_ErrorsTableIsTheCatalogue: the README's Errors table is
// generated from the problem-code catalogue, every row exactly.
func TestREADME_ErrorsTableIsTheCatalogue(t *testing.T) {
	apitest.SyncREADMEPart(t, "../README.md", "errors table", errorsTable())
}

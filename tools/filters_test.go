package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMCP_MultiValueFilter_ArrayOrCommaSeparated: a multi-value filter
// takes a JSON array (as its input schema says) or one comma-separated
// string; an unknown value is a tool error naming the filter and listing
// the valid values; an empty array is refused like an empty filter.
func TestMCP_MultiValueFilter_ArrayOrCommaSeparated(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	c := e.client(tok, nil, false)
	ids := func(args map[string]any) []string {
		t.Helper()
		res := call(t, c, "list-release-operations", args)
		if res.IsError {
			t.Fatalf("%v: %s", args, resultText(t, res))
		}
		var out []string
		for _, it := range res.StructuredContent.(map[string]any)["items"].([]any) {
			out = append(out, it.(map[string]any)["status"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		status any
		want   []string
	}{
		{[]any{"pending", "running", "succeeded"}, []string{"succeeded"}},
		{"pending,succeeded", []string{"succeeded"}},
		{[]any{"failed", "pending"}, nil},
	} {
		got := ids(map[string]any{"project_id": "1", "status": tc.status})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("status %v (-want +got):\n%s", tc.status, diff)
		}
	}
	for _, bad := range []any{[]any{"succeeded", "bogus"}, []any{}, "succeeded,"} {
		res := call(t, c, "list-release-operations", map[string]any{"project_id": "1", "status": bad})
		p, _ := res.StructuredContent.(map[string]any)
		if !res.IsError || p["code"] != "invalid_parameter" || p["field"] != "status" {
			t.Errorf("status %v: %v", bad, res.StructuredContent)
		}
		if d, _ := p["detail"].(string); bad == nil || fmt.Sprint(bad) == "[succeeded bogus]" &&
			!strings.Contains(d, "awaiting_approval") {
			t.Errorf("status %v: the detail does not list the valid values: %q", bad, d)
		}
	}
}

package tools

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
)

// TestAppendCallResult_RateMeta_FastPathWritesWhatEncodingJSONWrites: a
// tool's answer with the rate budget in its _meta stays on the fast path
// (no decoding of the structured content) and is byte for byte what
// mcp-go's encoding writes; any other _meta leaves the fast path.
func TestAppendCallResult_RateMeta_FastPathWritesWhatEncodingJSONWrites(t *testing.T) {
	body := `{"name":"<Stark & Co>","n":1}`
	for _, tc := range []struct {
		name string
		meta map[string]any
		fast bool
	}{
		{"rate budget", map[string]any{RateMetaKey: api.RateStatus{Limit: 600, Remaining: 596, ResetSeconds: 1}},
			true},
		{"rate budget and a progress token", map[string]any{"progressToken": "p",
			RateMetaKey: api.RateStatus{Limit: 600}}, false},
		{"another member", map[string]any{"x/y": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mcp.NewToolResultText(body)
			res.RawStructuredContent = json.RawMessage(body)
			res.Meta = mcp.NewMetaFromMap(tc.meta)
			resp := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(7), res)
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(resp); err != nil {
				t.Fatal(err)
			}
			buf := newAnswerBuffer().(*answerBuffer)
			if fast := buf.appendCallResult(resp); fast != tc.fast {
				t.Fatalf("fast path %v, want %v", fast, tc.fast)
			}
			if !tc.fast {
				return
			}
			if d := cmp.Diff(want.String(), buf.b.String()); d != "" {
				t.Fatalf("fast path (-encoding/json +ours):\n%s", d)
			}
		})
	}
}

package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// stdEncode is what Huma's default format (encoding/json, HTML left as it
// is) writes for v.
func stdEncode(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestJSONFormat_WritesWhatEncodingJSONWrites: the faster encoder of the
// answers changes no byte of them: omitzero, omitempty, nullables, maps in
// key order, Marshalers (a list page), raw messages, times and text that
// encoding/json escapes (quotes, controls, U+2028, invalid UTF-8) or keeps
// (<, >, &).
func TestJSONFormat_WritesWhatEncodingJSONWrites(t *testing.T) {
	text := "a \"quoted\" <b>&amp;</b> \t\n\x01 \u2028\u2029 é 日本 \xff end"
	when := time.Date(2026, 11, 25, 10, 0, 0, 123456000, time.UTC)
	size := 12.5
	model := aiModelView(resources.AIModel{ID: 7, Repo: "org/m", DisplayName: text, Status: "owned",
		CreatedAt: when, UpdatedAt: when, NodeCaches: []resources.NodeCacheRef{{Hostname: "gpu-01",
			Status: "ready", SizeGB: &size, UpdatedAt: when}},
		AIModelMeta: resources.AIModelMeta{Notes: &text,
			Benchmarks: resources.Benchmarks{"z": 1.5, "a": "n/a", "m": 3.0}}})
	one := 1
	values := map[string]any{
		"model":                       model,
		"customer without vcs_status": Customer{ID: "1", Notes: &text, CreatedAt: when},
		"customer with vcs_status": Customer{ID: "2", VCSStatus: NullOf(&VCSStatus{State: "present"}),
			ProjectCount: &one},
		"customer with vcs_status null": Customer{ID: "3", VCSStatus: NullOf[VCSStatus](nil)},
		"problem": &Problem{Type: ProblemTypePrefix + "x", Title: "Bad", Status: 422, Detail: text,
			Errors: []*huma.ErrorDetail{{Message: text, Location: "body.x",
				Value: map[string]any{"k": []any{1, "<"}}}},
			Blockers: map[string]int{"projects": 2, "keys": 1}},
		"list page": ListBody[AIModel]{Items: []AIModel{model}},
		"raw":       map[string]any{"raw": json.RawMessage(` { "a" : [1, 2] } `)},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := JSONFormat.Marshal(&got, v); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(stdEncode(t, v), got.String()); diff != "" {
				t.Fatalf("JSONFormat differs from encoding/json (-std +got):\n%s", diff)
			}
		})
	}
}

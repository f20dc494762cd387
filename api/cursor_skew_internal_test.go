package api

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// TestCursors_IssuedByTheOtherRelease_Continue: replicas of two releases
// share the cursor key (server_keys), so a client paging during a rolling
// update may bring one release's cursor to the other. It continues when
// the newer release's payload has a member this one does not know, and
// when the list's filters gained an omitempty member the client did not
// use (the rule for new filters: docs/decisions.md, "Version skew").
func TestCursors_IssuedByTheOtherRelease_Continue(t *testing.T) {
	t.Parallel()
	c := NewCursors([]byte("shared by every replica"))
	filters := resources.AIModelFilter{Vendor: "qwen", Status: []string{"ready"}}
	type newerFilter struct {
		resources.AIModelFilter
		Added string `json:"added,omitempty"` // a filter of a newer release, not asked
	}
	newerPayload := func() string {
		raw, _ := json.Marshal(map[string]any{"l": "ai-models", "f": filterDigest(filters),
			"a": []string{"k1"}, "added_later": map[string]any{"order": "desc"}})
		return base64.RawURLEncoding.EncodeToString(append(raw, c.mac(raw)...))
	}
	for _, tc := range []struct {
		name           string
		cursor         string
		decodedAgainst any
	}{
		{"payload member of a newer release", newerPayload(), filters},
		{"filters of a newer release", *c.Encode("ai-models", newerFilter{AIModelFilter: filters},
			[]string{"k1"}), filters},
		{"filters of an older release", *c.Encode("ai-models", filters, []string{"k1"}),
			newerFilter{AIModelFilter: filters}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after, err := c.Decode("ai-models", tc.decodedAgainst, tc.cursor)
			if diff := cmp.Diff([]string{"k1"}, after); err != nil || diff != "" {
				t.Fatalf("Decode: %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

package evals

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckPath_Aggregates(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"items": [{"h": "a", "gpus": 7, "size": 61}, {"h": "b", "gpus": 1, "size": 2.3},
		{"h": "c", "gpus": 4, "size": 141}, {"h": "d", "gpus": null}], "total": 12, "none": []}`), &doc)
	n := func(f float64) *float64 { return &f }
	eq := func(f float64) *Bound { return &Bound{Eq: n(f)} }
	cases := []struct {
		name  string
		check PathCheck
		want  []string
	}{
		{"count of matches", PathCheck{Path: "$.items[*].h", Count: eq(4)}, nil},
		{"count of an array", PathCheck{Path: "$.items", Count: eq(4)}, nil},
		{"count of a filter matching nothing", PathCheck{Path: "$.items[?(@.gpus > 9)]", Count: eq(0)}, nil},
		{"count of a missing singular path", PathCheck{Path: "$.nope", Count: eq(0)}, nil},
		{"count of a scalar", PathCheck{Path: "$.total", Count: eq(1)}, nil},
		{"count out of bounds", PathCheck{Path: "$.items", Count: &Bound{AtMost: n(3)}},
			[]string{"$.items: count is 4, want at most 3"}},
		{"sum", PathCheck{Path: "$.items[?(@.gpus > 0)].gpus", Sum: eq(12)}, nil},
		{"sum of decimals as written", PathCheck{Path: "$.items[0:3].size", Sum: eq(204.3)}, nil},
		{"sum wrong", PathCheck{Path: "$.items[0:3].gpus", Sum: eq(11)},
			[]string{"$.items[0:3].gpus: sum is 12, want 11"}},
		{"sum of nothing", PathCheck{Path: "$.none", Sum: eq(0)}, nil},
		{"sum within bounds", PathCheck{Path: "$.items[0:3].gpus", Sum: &Bound{AtLeast: n(12), AtMost: n(12)}}, nil},
		{"sum below", PathCheck{Path: "$.items[0:3].gpus", Sum: &Bound{AtLeast: n(13)}},
			[]string{"$.items[0:3].gpus: sum is 12, want at least 13"}},
		{"sum over a null", PathCheck{Path: "$.items[*].gpus", Sum: eq(12)},
			[]string{"$.items[*].gpus: sum: element 3 is null, not a number"}},
		{"sum over strings", PathCheck{Path: "$.items[*].h", Sum: eq(0)},
			[]string{`$.items[*].h: sum: element 0 is "a", not a number`}},
		{"min and max", PathCheck{Path: "$.items[0:3].size", Min: eq(2.3), Max: eq(141)}, nil},
		{"max wrong and min within", PathCheck{Path: "$.items[0:3].gpus", Min: &Bound{AtLeast: n(1)}, Max: eq(4)},
			[]string{"$.items[0:3].gpus: max is 7, want 4"}},
		{"min of nothing", PathCheck{Path: "$.none", Min: eq(0)},
			[]string{"$.none: min: the path selects no numbers"}},
		{"with other checks", PathCheck{Path: "$.items[*].h", Len: new(int), Count: eq(4)},
			[]string{"$.items[*].h: length is 4, want 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, checkPath(c.check, doc)); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestVars_MemberAccessReachesObjectMembers(t *testing.T) {
	v := vars{"node": map[string]any{"hostname": "gpu-1", "gpus": 7.0, "owner": map[string]any{"email": "a@b"}},
		"host": "gpu-2"}
	got, err := v.value(map[string]any{"h": "{{node.hostname}}", "n": "{{ node.gpus }}",
		"path": "/{{node.owner.email}}/{{host}}"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"h": "gpu-1", "n": 7.0, "path": "/a@b/gpu-2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	for ref, msg := range map[string]string{
		"{{node.name}}":          "{{node.name}}: node has no member name",
		"{{host.name}}":          `{{host.name}}: host is "gpu-2", not an object`,
		"{{node.gpus.count}}":    "{{node.gpus.count}}: node.gpus is 7, not an object",
		"x {{missing.hostname}}": "nothing was captured as missing",
	} {
		if _, err := v.value(ref); err == nil || err.Error() != msg {
			t.Errorf("%s: error %v, want %q", ref, err, msg)
		}
	}
}

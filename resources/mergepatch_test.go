package resources

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergePatch_RFC7396AppendixA runs the examples of RFC 7396, Appendix A.
func TestMergePatch_RFC7396AppendixA(t *testing.T) {
	for _, c := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	} {
		t.Run(c.target+" + "+c.patch, func(t *testing.T) {
			var target, patch, want any
			for i, s := range []string{c.target, c.patch, c.want} {
				if err := json.Unmarshal([]byte(s), []*any{&target, &patch, &want}[i]); err != nil {
					t.Fatal(err)
				}
			}
			if d := cmp.Diff(want, MergePatch(target, patch)); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

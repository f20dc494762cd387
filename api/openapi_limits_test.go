package api

import "testing"

func TestPatternMaxLength_AnchoredBoundedPatternsOnly(t *testing.T) {
	cases := []struct {
		pattern string
		n       int
		ok      bool
	}{
		{`^[1-9][0-9]{0,8}$`, 9, true},
		{`^([1-9][0-9]{0,17}|release:[1-9][0-9]{0,8})$`, 18, true},
		{`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`, 64, true},
		{`^ab?c{2}$`, 4, true},
		{`^[a-z]+$`, 0, false},      // unbounded
		{`^(\.?[a-z])*$`, 0, false}, // unbounded
		{`[a-z]{1,3}`, 0, false},    // not anchored: longer strings match
		{`^[a-z]{1,3}`, 0, false},   // open end
		{`^x{2,}$`, 0, false},       // open repeat
		{`^[`, 0, false},            // not a pattern
		{`^é{2}$`, 2, true},         // characters, not bytes
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			n, ok := patternMaxLength(c.pattern)
			if ok != c.ok || (ok && n != c.n) {
				t.Fatalf("got %d %v, want %d %v", n, ok, c.n, c.ok)
			}
		})
	}
}

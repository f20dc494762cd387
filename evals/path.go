package evals

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ohler55/ojg/jp"
)

// compilePath parses a JSONPath with ojg's jp (RFC 9535 syntax).
func compilePath(s string) (jp.Expr, error) {
	x, err := jp.ParseString(s)
	if err != nil {
		return nil, fmt.Errorf("JSONPath %q: %v", s, err)
	}
	return x, nil
}

// singular reports whether the path names at most one value: only the root,
// member names and array indexes.
func singular(x jp.Expr) bool {
	for _, f := range x {
		switch f.(type) {
		case jp.Root, jp.At, jp.Child, jp.Nth, jp.Bracket:
		default:
			return false
		}
	}
	return true
}

// selectPath evaluates x on doc: the single match of a singular path, else
// the array of every match (possibly empty); found tells whether anything
// matched.
func selectPath(x jp.Expr, doc any) (v any, found bool) {
	got := x.Get(doc)
	if singular(x) {
		if len(got) == 0 {
			return nil, false
		}
		return got[0], true
	}
	if got == nil {
		got = []any{}
	}
	return got, len(got) > 0
}

// checkPath runs one PathCheck on doc and returns the failures.
func checkPath(c PathCheck, doc any) []string {
	x, err := compilePath(c.Path)
	if err != nil {
		return []string{err.Error()}
	}
	v, found := selectPath(x, doc)
	var fails []string
	fail := func(format string, args ...any) {
		fails = append(fails, c.Path+": "+fmt.Sprintf(format, args...))
	}
	if c.Exists != nil && *c.Exists != found {
		fail("exists is %v, want %v", found, *c.Exists)
	}
	for _, f := range checkAggregates(c, v, found) {
		fail("%s", f)
	}
	if !found && singular(x) && (c.Eq != nil || c.Contains != nil || c.Len != nil || c.Matches != "") {
		fail("matches nothing")
		return fails
	}
	if c.Eq != nil && !jsonEqual(v, c.Eq) {
		fail("is %s, want %s", brief(v), brief(raw(c.Eq)))
	}
	if c.Contains != nil && !contains(v, raw(c.Contains)) {
		fail("%s does not contain %s", brief(v), brief(raw(c.Contains)))
	}
	if c.Len != nil {
		if n, ok := length(v); !ok || n != *c.Len {
			fail("length is %s, want %d", lengthText(n, ok), *c.Len)
		}
	}
	if c.Matches != "" {
		if msg := matchAll(c.Matches, v); msg != "" {
			fail("%s", msg)
		}
	}
	return fails
}

// raw decodes a JSON member of a suite.
func raw(m json.RawMessage) any {
	var v any
	_ = json.Unmarshal(m, &v)
	return v
}

// jsonEqual compares a decoded value with a raw expectation as JSON.
func jsonEqual(v any, want json.RawMessage) bool {
	return canonical(v) == canonical(raw(want))
}

// canonical is v's JSON text with sorted members (encoding/json sorts).
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(v, want any) bool {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if canonical(e) == canonical(want) {
				return true
			}
		}
	case string:
		s, ok := want.(string)
		return ok && strings.Contains(t, s)
	}
	return false
}

func length(v any) (int, bool) {
	switch t := v.(type) {
	case []any:
		return len(t), true
	case string:
		return len([]rune(t)), true
	case map[string]any:
		return len(t), true
	}
	return 0, false
}

func lengthText(n int, ok bool) string {
	if !ok {
		return "undefined (not an array, string or object)"
	}
	return fmt.Sprint(n)
}

// matchAll checks that the string (or every element of an array) matches
// pattern; numbers and other scalars are matched as their JSON text.
func matchAll(pattern string, v any) string {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return err.Error()
	}
	items, isArr := v.([]any)
	if !isArr {
		items = []any{v}
	}
	for _, e := range items {
		s, ok := e.(string)
		if !ok {
			s = canonical(e)
		}
		if !re.MatchString(s) {
			return fmt.Sprintf("%s does not match %s", brief(e), pattern)
		}
	}
	return ""
}

// brief is v as JSON, cut past 120 bytes (cut), for failure messages.
func brief(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return cut(strings.TrimSpace(b.String()), 120)
}

package api

import (
	"regexp/syntax"

	"github.com/danielgtaylor/huma/v2"
)

// deriveLimits states the limits a schema already enforces but does not
// spell out, so that every input is visibly bounded (OWASP API4): a string
// whose anchored pattern admits at most n characters gets maxLength n; an
// integer with an enum gets the enum's minimum and maximum. Only one new
// refusal: a multi-value filter of n enum values takes at most n (any of
// them, each once is enough). Validation messages are recomputed for the
// schemas it changes.
func deriveLimits(s *huma.Schema) {
	changed := false
	if s.Type == huma.TypeArray && s.Items != nil {
		deriveLimits(s.Items)
		if s.MaxItems == nil && len(s.Items.Enum) > 0 {
			n := len(s.Items.Enum)
			s.MaxItems, changed = &n, true
		}
	}
	if s.MaxLength == nil && s.Pattern != "" && isType(s, huma.TypeString) {
		if n, ok := patternMaxLength(s.Pattern); ok {
			s.MaxLength, changed = &n, true
		}
	}
	if isType(s, huma.TypeInteger) && len(s.Enum) > 0 && s.Minimum == nil && s.Maximum == nil {
		if lo, hi, ok := enumRange(s.Enum); ok {
			s.Minimum, s.Maximum, changed = &lo, &hi, true
		}
	}
	if changed {
		s.PrecomputeMessages()
	}
}

func isType(s *huma.Schema, t string) bool {
	if s.Type == t {
		return true
	}
	for _, u := range s.OneOf {
		if u.Type == t {
			return true
		}
	}
	return false
}

func enumRange(values []any) (lo, hi float64, ok bool) {
	for i, v := range values {
		var f float64
		switch n := v.(type) {
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			return 0, 0, false
		}
		if i == 0 || f < lo {
			lo = f
		}
		if i == 0 || f > hi {
			hi = f
		}
	}
	return lo, hi, true
}

// patternMaxLength is the most characters a string matching pattern can
// hold, when the pattern is anchored at both ends and bounded.
func patternMaxLength(pattern string) (int, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return 0, false
	}
	n := maxRunes(re)
	return n, n >= 0
}

// maxRunes is the longest match of re in runes, or -1 when unbounded.
func maxRunes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return maxRunes(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		n := maxRunes(re.Sub[0])
		if re.Max < 0 || n < 0 {
			return -1
		}
		return re.Max * n
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n := maxRunes(sub)
			if n < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total
	}
	return 0 // empty matches and anchors
}

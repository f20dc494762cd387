package evals

import (
	"fmt"
	"math"
	"strconv"
)

// namedBound is one aggregate check: the aggregate's name and its bound.
type namedBound struct {
	name  string
	bound *Bound
}

// aggregates are the aggregate checks of a PathCheck, in the order they
// are run and reported.
func (c PathCheck) aggregates() []namedBound {
	return []namedBound{{"count", c.Count}, {"sum", c.Sum}, {"min", c.Min}, {"max", c.Max}}
}

// checkAggregates runs count, sum, min and max on the elements of v (the
// value the path selected; found tells whether it selected anything) and
// returns the failures, each without the path.
func checkAggregates(c PathCheck, v any, found bool) []string {
	elems := elements(v, found)
	var fails []string
	for _, a := range c.aggregates() {
		if a.bound == nil {
			continue
		}
		got, err := aggregate(a.name, elems)
		if err != "" {
			fails = append(fails, a.name+": "+err)
			continue
		}
		if msg := a.bound.judge(got); msg != "" {
			fails = append(fails, fmt.Sprintf("%s is %s, %s", a.name, number(got), msg))
		}
	}
	return fails
}

// elements are what an aggregate runs over: an array's elements, else the
// value itself; nothing when the path selected nothing.
func elements(v any, found bool) []any {
	if arr, ok := v.([]any); ok {
		return arr
	}
	if !found {
		return nil
	}
	return []any{v}
}

// aggregate computes one aggregate; err says why it cannot (an element
// that is not a number, min or max of nothing).
func aggregate(name string, elems []any) (float64, string) {
	if name == "count" {
		return float64(len(elems)), ""
	}
	nums := make([]float64, len(elems))
	for i, e := range elems {
		n, ok := e.(float64)
		if !ok {
			return 0, fmt.Sprintf("element %d is %s, not a number", i, brief(e))
		}
		nums[i] = n
	}
	if name != "sum" && len(nums) == 0 {
		return 0, "the path selects no numbers"
	}
	out := 0.0
	for i, n := range nums {
		switch {
		case name == "sum":
			out += n
		case i == 0, name == "min" && n < out, name == "max" && n > out:
			out = n
		}
	}
	return out, ""
}

// judge says how got misses the bound ("" when it holds).
func (b Bound) judge(got float64) string {
	switch {
	case b.Eq != nil && !near(got, *b.Eq):
		return "want " + number(*b.Eq)
	case b.AtLeast != nil && got < *b.AtLeast && !near(got, *b.AtLeast):
		return "want at least " + number(*b.AtLeast)
	case b.AtMost != nil && got > *b.AtMost && !near(got, *b.AtMost):
		return "want at most " + number(*b.AtMost)
	}
	return ""
}

// near reports whether a and b are equal within a relative 1e-9 (sums of
// decimals such as 61 + 2.3 are not exact in binary).
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// number is n as a person writes it: 640000000000, 102.5.
func number(n float64) string {
	return strconv.FormatFloat(n, 'f', -1, 64)
}

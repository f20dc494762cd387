package evals

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// templateRE finds {{var}} templates, also {{var.member.member}}.
var templateRE = regexp.MustCompile(
	`\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}`)

// varNameRE is what a capture may be called.
var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checker gathers the faults of one file, in document order, and the
// variables captured so far.
type checker struct {
	f    *SuiteFile
	vars map[string]bool
	errs []error
}

func (c *checker) fault(loc []string, format string, args ...any) {
	c.errs = append(c.errs, c.f.fault(loc, format, args...))
}

// check finds what the schema cannot: one action per step, JSONPaths and
// regular expressions that compile, templates naming a variable captured
// before, a check in every path check and sound aggregate bounds, for_each
// over a list captured before under a name of its own, trajectories the
// script fulfils.
func (f *SuiteFile) check() error {
	c := &checker{f: f, vars: map[string]bool{}}
	for i, st := range f.Suite.Fixture.Setup {
		c.step(loc("fixture", "setup", i), st)
	}
	for i, t := range f.Suite.Turns {
		c.turn(loc("turns", i), t)
	}
	return joinErrs(c.errs)
}

func (c *checker) step(at []string, st Step) {
	switch {
	case (st.REST == nil) == (st.Portal == nil):
		c.fault(at, "give exactly one of rest and portal")
	case st.REST != nil:
		c.templates(append(at, "rest", "path"), st.REST.Path)
		c.templates(append(at, "rest", "token"), st.REST.Token)
		c.templates(append(at, "rest", "body"), raw(mustJSON(st.REST.Body)))
		c.templates(append(at, "rest", "headers"), st.REST.Headers)
		if st.REST.Until != 0 && st.Repeat < 2 {
			c.fault(append(at, "rest", "until_status"), "until_status needs repeat of at least 2")
		}
	default:
		for i, a := range st.Portal {
			c.templates(append(at, "portal", strconv.Itoa(i)), a)
		}
	}
	c.captures(append(at, "capture"), st.Capture)
}

func (c *checker) turn(at []string, t Turn) {
	c.templates(append(at, "token"), t.Token)
	if len(t.Calls) == 0 && t.Answer == nil && t.Trajectory == nil {
		c.fault(at, "a turn needs calls, an answer or a trajectory to check")
	}
	for i, call := range t.Calls {
		c.call(append(at, "calls", strconv.Itoa(i)), call)
	}
	if t.Answer != nil && t.Answer.Matches != "" {
		if _, err := regexp.Compile(t.Answer.Matches); err != nil {
			c.fault(append(at, "answer", "matches"), "%v", err)
		}
	}
	if t.Trajectory != nil && len(t.Calls) > 0 {
		c.trajectory(append(at, "trajectory"), *t.Trajectory, t.Calls)
	}
}

// trajectory checks that the scripted calls fulfil the turn's trajectory;
// a for_each call counts once, so only the modes that ignore how often a
// tool is called may go with one.
func (c *checker) trajectory(at []string, want Trajectory, calls []Call) {
	names := make([]string, len(calls))
	repeated := false
	for i, call := range calls {
		names[i], repeated = call.Tool, repeated || call.ForEach != nil
	}
	if repeated && (want.Mode == ModeStrict || want.Mode == ModeUnordered) {
		c.fault(append(at, "mode"), "a turn with for_each calls its tool a number of times known only "+
			"when it runs: use superset or subset")
		return
	}
	if msg := judgeTrajectory(want, names); msg != "" {
		c.fault(at, "the scripted calls do not fulfil it: %s", msg)
	}
}

func (c *checker) call(at []string, call Call) {
	if as := c.forEach(at, call); as != "" {
		defer delete(c.vars, as) // the element is known in this call's args only
	}
	c.templates(append(at, "args"), call.Args)
	c.pathChecks(append(at, "expect", "json"), call.Expect.JSON)
	c.pathChecks(append(at, "expect", "meta"), call.Expect.Meta)
	if call.Expect.IsError != nil && !*call.Expect.IsError && call.Expect.Code != "" {
		c.fault(append(at, "expect", "code"), "a problem code needs is_error true")
	}
	c.captures(append(at, "capture"), call.Capture)
}

// forEach checks a call's for_each: in names one list captured before, as
// is a name of its own, and the call captures nothing. It returns the
// element's name, known while the call's args are checked ("" when none).
func (c *checker) forEach(at []string, call Call) string {
	fe := call.ForEach
	if fe == nil {
		return ""
	}
	at = slices.Clip(at)
	if _, exact := onlyTemplate(fe.In); !exact {
		c.fault(append(at, "for_each", "in"),
			"in is exactly one {{var}} (or {{var.member}}) holding a list captured before")
	} else {
		c.templates(append(at, "for_each", "in"), fe.In)
	}
	if len(call.Capture) > 0 {
		c.fault(append(at, "capture"),
			"a call with for_each captures nothing: which of its calls' results would it be?")
	}
	if c.vars[fe.As] {
		c.fault(append(at, "for_each", "as"),
			"%s is captured before; the element needs a name of its own", fe.As)
		return ""
	}
	c.vars[fe.As] = true
	return fe.As
}

// pathChecks checks the JSONPaths, regular expressions and bounds of a
// list of path checks, and that each has something to check.
func (c *checker) pathChecks(at []string, checks []PathCheck) {
	for i, pc := range checks {
		p := append(slices.Clip(at), strconv.Itoa(i))
		if _, err := compilePath(pc.Path); err != nil {
			c.fault(append(p, "path"), "%v", err)
		}
		if pc.Eq == nil && pc.Contains == nil && pc.Len == nil && pc.Exists == nil && pc.Matches == "" &&
			pc.Count == nil && pc.Sum == nil && pc.Min == nil && pc.Max == nil {
			c.fault(p, "give at least one of eq, contains, len, exists, matches, count, sum, min, max")
		}
		if pc.Matches != "" {
			if _, err := regexp.Compile(pc.Matches); err != nil {
				c.fault(append(p, "matches"), "%v", err)
			}
		}
		for _, a := range pc.aggregates() {
			if a.bound != nil {
				c.bound(append(slices.Clip(p), a.name), *a.bound)
			}
		}
	}
}

// bound checks that an aggregate's bound is eq alone, or at_least and/or
// at_most in order.
func (c *checker) bound(at []string, b Bound) {
	switch {
	case b.Eq == nil && b.AtLeast == nil && b.AtMost == nil:
		c.fault(at, "give eq, or at_least and/or at_most")
	case b.Eq != nil && (b.AtLeast != nil || b.AtMost != nil):
		c.fault(at, "give eq, or at_least and/or at_most, not both")
	case b.AtLeast != nil && b.AtMost != nil && *b.AtLeast > *b.AtMost:
		c.fault(at, "at_least %s is more than at_most %s", number(*b.AtLeast), number(*b.AtMost))
	}
}

// captures checks names and paths, then makes the variables known.
func (c *checker) captures(at []string, m map[string]string) {
	for _, name := range sortedKeys(m) {
		if !varNameRE.MatchString(name) {
			c.fault(append(at, name), "variable names are letters, digits and '_'")
		}
		if _, err := compilePath(m[name]); err != nil {
			c.fault(append(at, name), "%v", err)
		}
	}
	for name := range m {
		c.vars[name] = true
	}
}

// templates reports every {{var}} in v (strings at any depth) that no
// earlier capture defines.
func (c *checker) templates(at []string, v any) {
	switch t := v.(type) {
	case string:
		for _, m := range templateRE.FindAllStringSubmatch(t, -1) {
			if name, _, _ := strings.Cut(m[1], "."); !c.vars[name] {
				c.fault(at, "{{%s}} is not captured by an earlier step or call", m[1])
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(t) {
			c.templates(append(slices.Clip(at), k), t[k])
		}
	case map[string]string:
		for _, k := range sortedKeys(t) {
			c.templates(append(slices.Clip(at), k), t[k])
		}
	case []any:
		for i, e := range t {
			c.templates(append(slices.Clip(at), strconv.Itoa(i)), e)
		}
	}
}

// loc builds a member location from names and indexes.
func loc(parts ...any) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprint(p)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

package evals

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Trajectory modes.
const (
	ModeStrict    = "strict"
	ModeUnordered = "unordered"
	ModeSubset    = "subset"
	ModeSuperset  = "superset"
)

// judgeTrajectory compares the tool names called with the expectation and
// returns why they differ ("" when they fulfil it).
func judgeTrajectory(want Trajectory, got []string) string {
	mode := want.Mode
	if mode == "" {
		mode = ModeSuperset
	}
	var ok bool
	switch mode {
	case ModeStrict:
		ok = slices.Equal(got, want.Tools)
	case ModeUnordered:
		ok = slices.Equal(sorted(got), sorted(want.Tools))
	case ModeSubset:
		ok = every(got, want.Tools)
	case ModeSuperset:
		ok = every(want.Tools, got)
	default:
		return "unknown mode " + mode
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("trajectory (%s) wants %v, the calls were %v", mode, want.Tools, got)
}

// every reports whether each of items is among set.
func every(items, set []string) bool {
	for _, it := range items {
		if !slices.Contains(set, it) {
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// judgeAnswer checks an agent's final answer; it returns the failures.
func judgeAnswer(want Answer, answer string) []string {
	var fails []string
	lower := strings.ToLower(answer)
	for _, s := range want.Contains {
		if !strings.Contains(lower, strings.ToLower(s)) {
			fails = append(fails, fmt.Sprintf("the answer does not mention %q", s))
		}
	}
	if want.Matches != "" {
		re, err := regexp.Compile(want.Matches)
		if err != nil {
			fails = append(fails, err.Error())
		} else if !re.MatchString(answer) {
			fails = append(fails, fmt.Sprintf("the answer does not match %s", want.Matches))
		}
	}
	return fails
}

// mustJSON encodes v (a value decoded from JSON, so it cannot fail).
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// joinErrs joins errors, nil when there are none.
func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

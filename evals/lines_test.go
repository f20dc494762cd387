package evals

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// linesSuite fails at known lines: path checks (10, 11, 17, 22), a
// capture (7), an expected code (20, twice: is_error and code) and args
// whose template breaks the run (26).
const linesSuite = `name: lines
description: d
turns:
  - user: Is every node online?
    calls:
      - tool: list-nodes
        capture: {first: "$.items[0]", nodes: $.items, gone: $.nope}
        expect:
          json:
            - {path: $.items, len: 2}
            - {path: $.names, len: 9}
      - tool: get-node
        for_each: {in: "{{nodes}}", as: node}
        args: {hostname: "{{node.hostname}}"}
        expect:
          json:
            - {path: $.online, eq: true}
      - tool: get-meta
        expect:
          code: not_found
          meta:
            - {path: "$.x", exists: true}
  - user: And the first one?
    calls:
      - tool: get-node
        args: {hostname: "{{first.host}}"}
`

// TestRun_FailureReasons_NameTheSuiteFilesLine: a failed expectation's
// reason named the suite file but not the line; each reason now carries
// the line of what failed (the path check, the expectation's member, the
// capture, else the call), in the JSON report (reason_lines) and in the
// table (file:line: suite run N: reason).
func TestRun_FailureReasons_NameTheSuiteFilesLine(t *testing.T) {
	f, err := Parse("evals/suites/lines.yaml", []byte(linesSuite))
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), Target{URL: fakeFleet(t, 3), Token: "t"}, []*SuiteFile{f},
		Options{NoTiming: true})
	run := rep.Suites[0].Runs[0]
	type reason struct {
		Line int
		Text string
	}
	var got []reason
	for i, text := range run.Reasons {
		r := reason{Text: text}
		if i < len(run.Lines) {
			r.Line = run.Lines[i]
		}
		got = append(got, r)
	}
	want := []reason{
		{10, "turns[0].calls[0] list-nodes: $.items: length is 3, want 2"},
		{11, "turns[0].calls[0] list-nodes: $.names: length is 3, want 9"},
		{7, "turns[0].calls[0] list-nodes: capture gone: $.nope selects nothing"},
		{17, `turns[0].calls[1] get-node, node[1] = {"gpus":2,"hostname":"n2"}: $.online: is false, want true`},
		{20, `turns[0].calls[2] get-meta: is_error is false, want true ({"v":1})`},
		{20, `turns[0].calls[2] get-meta: problem code is "", want "not_found"`},
		{22, "turns[0].calls[2] get-meta: _meta $.x: exists is false, want true"},
		{26, "turns[1]: turns[1].calls[0] get-node: {{first.host}}: first has no member host"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons and their lines (-want +got)\n%s", diff)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	line := "evals/suites/lines.yaml:10: lines run 1: turns[0].calls[0] list-nodes: $.items: length is 3, want 2\n"
	if !strings.Contains(out.String(), line) {
		t.Errorf("no line %q in:\n%s", line, out.String())
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"reason_lines": [`) {
		t.Errorf("the JSON report has no reason_lines (%v):\n%s", err, js.String())
	}
}

// TestRun_FixtureFailures_NameTheirLine: a setup step that fails names
// the step's line; a token the fixture cannot mint names the token's.
func TestRun_FixtureFailures_NameTheirLine(t *testing.T) {
	cases := []struct {
		name, fixture string
		line          int
	}{
		{"setup step", "fixture:\n  world: demo\n  setup:\n    - name: broken\n" +
			"      rest: {method: POST, path: /nowhere, status: 299}\n", 6},
		{"token without a portal", "fixture:\n  world: demo\n  token: {scopes: [ai-read-global]}\n", 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "name: f\ndescription: d\n" + c.fixture + "turns:\n  - user: u\n    calls:\n" +
				"      - tool: get-meta\n"
			f, err := Parse("f.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			rep := Run(context.Background(), Target{URL: fakeFleet(t, 1), Token: "t"}, []*SuiteFile{f},
				Options{NoTiming: true})
			run := rep.Suites[0].Runs[0]
			if diff := cmp.Diff([]int{c.line}, run.Lines); diff != "" {
				t.Errorf("lines of %q (-want +got)\n%s", run.Reasons, diff)
			}
		})
	}
}

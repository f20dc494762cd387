package evals

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goodSuite = `name: fleet
description: Which nodes are there?
turns:
  - user: Which GPU nodes do we have?
    calls:
      - tool: list-ai-nodes
        args: {site: fra1}
        expect:
          json:
            - {path: "$.items[*].hostname", contains: gpu-fra1-01}
        capture: {first: "$.items[0].hostname"}
      - tool: get-ai-node
        args: {hostname: "{{first}}"}
    trajectory: {mode: strict, tools: [list-ai-nodes, get-ai-node]}
`

func TestParse_GoodSuite(t *testing.T) {
	f, err := Parse("fleet.yaml", []byte(goodSuite))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Suite.Turns[0].Calls[1].Args["hostname"]; got != "{{first}}" {
		t.Fatalf("args: %v", got)
	}
}

func TestParse_BadFilesNameFileLineAndMember(t *testing.T) {
	cases := []struct{ name, edit, want string }{
		{"unknown member", "        args: {site: fra1}\n", "        args: {site: fra1}\n        colour: red\n"},
		{"wrong type", "args: {site: fra1}", "args: [fra1]"},
		{"missing user", "  - user: Which GPU nodes do we have?\n", "  - token: abc\n"},
		{"duplicate key", "        args: {site: fra1}\n", "        args: {site: fra1}\n        tool: again\n"},
		{"bad path", `"$.items[*].hostname"`, `"$.items[*"`},
		{"unknown var", `"{{first}}"`, `"{{second}}"`},
		{"trajectory", "mode: strict, tools: [list-ai-nodes, get-ai-node]", "mode: strict, tools: [get-ai-node]"},
		{"bad mode", "mode: strict", "mode: roughly"},
		{"no check", "contains: gpu-fra1-01", "colour: red"},
	}
	want := map[string][]FileError{
		"unknown member": {{File: "f.yaml", Line: 8, Member: "turns[0].calls[0].colour", Msg: "unknown member"}},
		"wrong type":     {{File: "f.yaml", Line: 7, Member: "turns[0].calls[0].args"}},
		"missing user":   {{File: "f.yaml", Line: 4, Member: "turns[0]"}},
		"bad path":       {{File: "f.yaml", Line: 10, Member: "turns[0].calls[0].expect.json[0].path"}},
		"unknown var":    {{File: "f.yaml", Line: 13, Member: "turns[0].calls[1].args.hostname"}},
		"trajectory":     {{File: "f.yaml", Line: 14, Member: "turns[0].trajectory"}},
		"bad mode":       {{File: "f.yaml", Line: 14, Member: "turns[0].trajectory.mode"}},
		"duplicate key":  {{File: "f.yaml", Line: 8}},
		"no check":       {{File: "f.yaml", Line: 10, Member: "turns[0].calls[0].expect.json[0].colour", Msg: "unknown member"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(goodSuite, c.edit, c.want, 1)
			if src == goodSuite {
				t.Fatal("edit did not apply")
			}
			_, err := Parse("f.yaml", []byte(src))
			got := fileErrors(err)
			for i := range got {
				if want[c.name][0].Msg == "" {
					got[i].Msg = ""
				}
			}
			if diff := cmp.Diff(want[c.name], got); diff != "" {
				t.Fatalf("%v\n(-want +got)\n%s", err, diff)
			}
			if !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("message %q does not start with the file", err)
			}
		})
	}
}

// fileErrors unpacks the FileErrors of a (joined) error.
func fileErrors(err error) []FileError {
	var out []FileError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, fileErrors(e)...)
		}
		return out
	}
	var fe *FileError
	if errors.As(err, &fe) {
		out = append(out, *fe)
	}
	return out
}

func TestLoadFiles_TwoFilesWithOneNameRefused(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(goodSuite), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadFiles([]string{a, b})
	want := []FileError{{File: b, Line: 1, Member: "name", Msg: `suite name "fleet" is also used by ` + a}}
	if diff := cmp.Diff(want, fileErrors(err)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
}

func TestParse_CheckWithNothingToCheckAndStepWithTwoActions(t *testing.T) {
	src := strings.Replace(goodSuite, "contains: gpu-fra1-01", "path2: x", 1)
	src = "fixture:\n  setup:\n    - {portal: [api, enable], rest: {method: GET, path: /meta}}\n" +
		strings.Replace(src, `{path: "$.items[*].hostname", path2: x}`, `{path: "$.items"}`, 1)
	_, err := Parse("f.yaml", []byte(src))
	got := fileErrors(err)
	for i := range got {
		got[i].Msg = ""
	}
	want := []FileError{{File: "f.yaml", Line: 3, Member: "fixture.setup[0]"},
		{File: "f.yaml", Line: 13, Member: "turns[0].calls[0].expect.json[0]"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%v\n(-want +got)\n%s", err, diff)
	}
}

func TestParse_UntilStatusNeedsRepeat(t *testing.T) {
	src := strings.Replace(goodSuite, "turns:\n", "fixture:\n  setup:\n    - rest: {method: GET, path: /meta, until_status: 429}\n"+
		"turns:\n", 1)
	_, err := Parse("f.yaml", []byte(src))
	got := fileErrors(err)
	if len(got) != 1 || got[0].Member != "fixture.setup[0].rest.until_status" || got[0].Line != 5 {
		t.Fatalf("%v", err)
	}
}

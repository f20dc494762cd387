package evals

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestReport_WriteTable_FailureReasonNamesItsFile: each reason under the
// table starts with the suite's file, so a failed expectation is found
// without the JSON report.
func TestReport_WriteTable_FailureReasonNamesItsFile(t *testing.T) {
	var r Report
	r.add(SuiteResult{Suite: "where-model-cached", File: "evals/suites/where-model-cached.yaml",
		Runs: []RunResult{{Calls: 1, Reasons: []string{"turn 1: expected list-node-caches"}}}})
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	want := "evals/suites/where-model-cached.yaml: where-model-cached run 1: turn 1: expected list-node-caches\n"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("no line %q in:\n%s", want, out.String())
	}
}

// TestReport_WriteTable_ReasonOneLineAndBounded_JSONKeepsItWhole: a
// reason holding a server's multi-line answer (a failed REST setup step)
// broke the table's lines; the table collapses each run of white space to
// one space and cuts a reason past maxTableReason bytes (never
// inside a character), while --json keeps the reason as it was.
func TestReport_WriteTable_ReasonOneLineAndBounded_JSONKeepsItWhole(t *testing.T) {
	long := strings.Repeat("é", 2*maxTableReason)
	broken := "name: s\ndescription: d\nfixture:\n  setup:\n    - name: make\n" +
		"      rest: {method: POST, path: /broken}\n" +
		"turns:\n  - user: u\n    calls:\n      - tool: get-thing\n"
	cases := []struct {
		name      string
		run       func(t *testing.T) (string, RunResult)
		wantLine  string
		wantWhole string
	}{
		{"server's multi-line answer", func(t *testing.T) (string, RunResult) {
			return "s.yaml", playOne(t, brokenServer(t), broken)
		}, "s.yaml:5: s run 1: fixture: setup[0] make: POST /api/v1/broken answered 500: " +
			"first line second line",
			"fixture: setup[0] make: POST /api/v1/broken answered 500: first line\n\n  second\tline\r\n"},
		{"long reason", func(*testing.T) (string, RunResult) {
			return "x.yaml", RunResult{Reasons: []string{long}}
		}, "x.yaml: s run 1: " + long[:maxTableReason] + "…", long},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Report
			file, res := c.run(t)
			r.add(SuiteResult{Suite: "s", File: file, Runs: []RunResult{res}})
			table, whole := writeBoth(t, &r)
			if diff := cmp.Diff(c.wantLine, strings.Split(table, "\n")[2]); diff != "" {
				t.Errorf("table's reason line (-want +got)\n%s\nin:\n%s", diff, table)
			}
			if diff := cmp.Diff([]string{c.wantWhole}, whole); diff != "" {
				t.Errorf("JSON reasons (-want +got)\n%s", diff)
			}
		})
	}
}

// writeBoth writes r as a table and as JSON: the table, and the reasons
// of the first suite's first run as the JSON gives them.
func writeBoth(t *testing.T, r *Report) (string, []string) {
	t.Helper()
	var table, js bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return table.String(), got.Suites[0].Runs[0].Reasons
}

// brokenServer answers POST /api/v1/broken 500 with a body of several
// lines, and serves get-thing over MCP.
func brokenServer(t *testing.T) string {
	t.Helper()
	s := server.NewMCPServer("broken", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("get-thing"),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("{}"), nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	mux.HandleFunc("POST /api/v1/broken", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("first line\n\n  second\tline\r\n"))
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestCut_NeverSplitsACharacter: a server's answer cut at 200 bytes could
// end inside a character, leaving invalid UTF-8 in the reason (shown as
// U+FFFD in --json); the cut moves back to the character's start.
func TestCut_NeverSplitsACharacter(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"ASCII", strings.Repeat("a", 5), "aaaa…"},
		{"inside é", "aéé", "aé…"},
		{"short", "é", "é"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, cut(c.in, 4)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestBrief_CutNeverSplitsACharacter: brief cut a long value at byte 117,
// inside a character when one straddled it (invalid UTF-8 in a failure
// reason); it cuts as cut does.
func TestBrief_CutNeverSplitsACharacter(t *testing.T) {
	v := "a" + strings.Repeat("é", 100) // quoted: 203 bytes, byte 117 inside an é
	got := brief(v)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 120+len("…") {
		t.Errorf("brief(a + 100 é) = %q (%d bytes): want valid UTF-8, at most 120 bytes then …",
			got, len(got))
	}
}

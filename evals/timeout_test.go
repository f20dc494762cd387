package evals

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// hangingServer serves an MCP server with get-thing (answers) and
// hang-thing (never answers), REST GET /api/v1/ok (answers {}) and every
// other request under /api/v1 never answered; with all, no request at all
// is answered. A request hangs until its client gives up or the test ends.
func hangingServer(t *testing.T, all bool) string {
	t.Helper()
	release := make(chan struct{})
	hang := func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-release:
		}
	}
	s := server.NewMCPServer("hang", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("get-thing"),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"id": "7"}, `{"id":"7"}`), nil
		})
	s.AddTool(mcp.NewTool("hang-thing"),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			hang(ctx)
			return mcp.NewToolResultText("late"), nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	mux.HandleFunc("GET /api/v1/ok", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("{}"))
	})
	mux.HandleFunc("/api/v1/", func(_ http.ResponseWriter, r *http.Request) { hang(r.Context()) })
	var h http.Handler = mux
	if all {
		h = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { hang(r.Context()) })
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler outlives the test
	return ts.URL
}

// outcome is what TestRun_RequestNeverAnswered_* compares of a run.
type outcome struct {
	Pass    bool
	Reasons []string
	Lines   []int
}

// TestRun_RequestNeverAnswered_RunFailsAfterStepTimeoutNextSuiteRuns: a
// server that takes the request and never answers hung the whole run
// forever; each HTTP request of the runner (REST setup step, MCP
// handshake, tools/call) is bounded by the step timeout, which fails that
// run with a reason saying what hung and the timeout, at the line of the
// step or call, and the next suite is played.
func TestRun_RequestNeverAnswered_RunFailsAfterStepTimeoutNextSuiteRuns(t *testing.T) {
	const d = time.Second
	ok := "name: ok\ndescription: d\nfixture:\n  setup:\n    - rest: {method: GET, path: /ok}\n" +
		"turns:\n  - user: u\n    calls:\n      - tool: get-thing\n"
	okRun := outcome{Pass: true}
	cases := []struct {
		name string
		all  bool
		src  string
		want []outcome
	}{
		{"REST setup step", false,
			"name: h\ndescription: d\nfixture:\n  setup:\n    - rest: {method: GET, path: /ok}\n" +
				"    - name: slow\n      rest: {method: POST, path: /hang}\nturns:\n  - user: u\n" +
				"    calls:\n      - tool: get-thing\n",
			[]outcome{{Reasons: []string{"fixture: setup[1] slow: POST /api/v1/hang: " +
				"no answer within 1s (--step-timeout)"}, Lines: []int{6}}, okRun}},
		{"MCP tools/call", false,
			"name: h\ndescription: d\nturns:\n  - user: u\n    calls:\n      - tool: get-thing\n" +
				"      - tool: hang-thing\n",
			[]outcome{{Reasons: []string{"turns[0]: tools/call hang-thing: " +
				"no answer within 1s (--step-timeout)"}, Lines: []int{7}}, okRun}},
		{"MCP handshake, nothing answered", true,
			"name: h\ndescription: d\nfixture: {setup: []}\nturns:\n  - user: u\n" +
				"    calls:\n      - tool: get-thing\n",
			[]outcome{
				{Reasons: []string{"fixture: MCP initialize: no answer within 1s (--step-timeout)"},
					Lines: []int{3}},
				{Reasons: []string{"fixture: MCP initialize: no answer within 1s (--step-timeout)"},
					Lines: []int{3}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := playEach(t, hangingServer(t, c.all), d, c.src, ok)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}

// playEach plays the suites once, in one Run, and gives each one's outcome.
func playEach(t *testing.T, url string, stepTimeout time.Duration, srcs ...string) []outcome {
	t.Helper()
	var files []*SuiteFile
	for i, src := range srcs {
		f, err := Parse(fmt.Sprintf("s%d.yaml", i), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	rep := Run(context.Background(), Target{URL: url, Token: "t"}, files,
		Options{NoTiming: true, StepTimeout: stepTimeout})
	var got []outcome
	for _, s := range rep.Suites {
		got = append(got, outcome{s.Runs[0].Pass, s.Runs[0].Reasons, s.Runs[0].Lines})
	}
	return got
}

// TestRun_PortalCallNeverAnswers_RunFailsAfterStepTimeout: portal calls
// (the run's token, a portal step) ran in process without a bound, so a
// portal held by a locked database hung the whole run; each is bounded by
// the step timeout like an HTTP request, and the next suite is played.
func TestRun_PortalCallNeverAnswers_RunFailsAfterStepTimeout(t *testing.T) {
	url := hangingServer(t, false)
	hang := func(ctx context.Context, args []string) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	src := "name: h\ndescription: d\nfixture:\n  token: {scopes: [ai-read-global]}\n" +
		"turns:\n  - user: u\n    calls:\n      - tool: get-thing\n"
	f, err := Parse("h.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), Target{URL: url, Token: "t", Portal: hang},
		[]*SuiteFile{f, f}, Options{NoTiming: true, StepTimeout: 200 * time.Millisecond})
	want := []string{"fixture: portal token create: no answer within 200ms (--step-timeout)"}
	for i, s := range rep.Suites {
		if diff := cmp.Diff(want, s.Runs[0].Reasons); diff != "" {
			t.Errorf("suite %d's reasons (-want +got)\n%s", i, diff)
		}
	}
}

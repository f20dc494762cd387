package evals_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"platformapi/bunstore/pgtest"
	"platformapi/cmd/platformapi/app"
	"platformapi/evals"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// startServer starts the embedded evaluation server (the wiring of
// `platformapi eval`) on this test's own database.
func startServer(t *testing.T) *app.EvalServer {
	t.Helper()
	opts := app.Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	srv, err := app.StartEvalServer(context.Background(), opts, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func target(srv *app.EvalServer) evals.Target {
	return evals.Target{URL: srv.URL, Token: srv.Token, Portal: srv.Portal}
}

// load parses every suite file matching pattern.
func load(t *testing.T, pattern string) []*evals.SuiteFile {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no suites at %s (%v)", pattern, err)
	}
	files, err := evals.LoadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// multiCallSuites may take more than two tool calls for one question (a
// turn), each for the reason given. Every other suite answers each of its
// questions in one or two calls and uses no for_each.
var multiCallSuites = map[string]string{
	"prod-versions-per-project": "the for_each demonstration: no fleet-wide read holds every project's " +
		"release state, so it takes one get-release-state per project",
}

// TestSuites_EveryQuestionTakesAtMostTwoCalls: the suites show operators'
// questions answered in at most two calls (the fleet-wide reads make that
// possible), except the suites of multiCallSuites.
func TestSuites_EveryQuestionTakesAtMostTwoCalls(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range load(t, "suites/*.yaml") {
		if _, exempt := multiCallSuites[f.Suite.Name]; exempt {
			seen[f.Suite.Name] = true
			continue
		}
		for i, turn := range f.Suite.Turns {
			if len(turn.Calls) > 2 {
				t.Errorf("%s: turns[%d] makes %d calls; answer the question in at most 2 or list the suite "+
					"in multiCallSuites with the reason", f.Path, i, len(turn.Calls))
			}
			for j, c := range turn.Calls {
				if c.ForEach != nil {
					t.Errorf("%s: turns[%d].calls[%d] has for_each (a call per element); list the suite in "+
						"multiCallSuites with the reason", f.Path, i, j)
				}
			}
		}
	}
	for name := range multiCallSuites {
		if !seen[name] {
			t.Errorf("multiCallSuites lists %s, which is not in evals/suites", name)
		}
	}
}

// TestSuites_EveryShippedSuitePassesScripted plays every suite of
// evals/suites in scripted mode against a real server on a real database.
func TestSuites_EveryShippedSuitePassesScripted(t *testing.T) {
	files := load(t, "suites/*.yaml")
	if len(files) < 50 {
		t.Fatalf("%d suites; at least 50 are promised", len(files))
	}
	turns := map[string]int{}
	for _, f := range files {
		turns[f.Suite.Name] = len(f.Suite.Turns)
	}
	rep := evals.Run(context.Background(), target(startServer(t)), files, evals.Options{})
	for _, s := range rep.Suites {
		t.Run(s.Suite, func(t *testing.T) {
			run := s.Runs[0]
			if !s.Pass {
				t.Fatalf("%s failed:\n%v", s.File, run.Reasons)
			}
			_, exempt := multiCallSuites[s.Suite]
			if run.Calls == 0 || (!exempt && run.Calls > 2*turns[s.Suite]) {
				t.Errorf("%d tool calls in %d turns; a question should need 1 or 2", run.Calls, turns[s.Suite])
			}
		})
	}
}

// TestSuites_TwoRunsOnFreshWorldsGiveIdenticalJSON: the demo world and its
// frozen clock make the results (without latencies) byte-identical.
func TestSuites_TwoRunsOnFreshWorldsGiveIdenticalJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two worlds")
	}
	files := load(t, "suites/*.yaml")
	var outs [2]bytes.Buffer
	for i := range outs {
		rep := evals.Run(context.Background(), target(startServer(t)), files, evals.Options{NoTiming: true, Repeat: 2})
		if err := rep.WriteJSON(&outs[i]); err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("run %d failed: %s", i, outs[i].String())
		}
	}
	if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
		t.Fatalf("two runs differ:\n%s\n---\n%s", outs[0].String(), outs[1].String())
	}
	if bytes.Contains(outs[0].Bytes(), []byte("latency")) {
		t.Fatal("latencies in a --no-timing report")
	}
}

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

// TestSuites_EveryShippedSuitePassesScripted plays every suite of
// evals/suites in scripted mode against a real server on a real database.
func TestSuites_EveryShippedSuitePassesScripted(t *testing.T) {
	files := load(t, "suites/*.yaml")
	if len(files) < 20 {
		t.Fatalf("%d suites; at least 20 are promised", len(files))
	}
	rep := evals.Run(context.Background(), target(startServer(t)), files, evals.Options{})
	for _, s := range rep.Suites {
		t.Run(s.Suite, func(t *testing.T) {
			run := s.Runs[0]
			if !s.Pass {
				t.Fatalf("%s failed:\n%v", s.File, run.Reasons)
			}
			if run.Calls == 0 || run.Calls > 3 {
				t.Errorf("%d tool calls; a question should need 1 to 3", run.Calls)
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

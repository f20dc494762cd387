package app

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEval_TargetNeverAnswers_EachSuiteFailsAfterStepTimeout: a --target
// that takes the connection and never answers hung `eval` forever; with
// --step-timeout each suite fails, its reason at the suite file's line
// naming what hung and the timeout, and eval exits 1 after both suites.
func TestEval_TargetNeverAnswers_EachSuiteFailsAfterStepTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"a", "b"} {
		f := filepath.Join(dir, name+".yaml")
		src := "name: " + name + "\ndescription: d\nfixture: {setup: []}\nturns:\n  - user: u\n" +
			"    calls:\n      - tool: get-meta\n"
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	args := append([]string{"eval", "--target", ts.URL, "--token", "t", "--no-timing",
		"--step-timeout", "300ms"}, files...)
	out, err := evalCLI(args...)
	if !errors.Is(err, ErrSuitesFailed) || !strings.Contains(out, "0 passed, 2 failed") {
		t.Fatalf("%v\n%s", err, out)
	}
	for i, f := range files {
		want := f + ":3: " + []string{"a", "b"}[i] +
			" run 1: fixture: MCP initialize: no answer within 300ms (--step-timeout)\n"
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestEval_StepTimeoutNotPositive_Refused: --step-timeout 0 or below would
// fail every request at once; it is refused by name before anything runs.
func TestEval_StepTimeoutNotPositive_Refused(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "--step-timeout", "0s", "f.yaml"},
		{"eval", "--step-timeout", "-1s", "f.yaml"},
	} {
		_, err := execute(t, args...)
		refusedWith(t, args, err, []string{"--step-timeout " + args[2], "must be more than 0"})
	}
}

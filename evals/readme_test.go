package evals_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"platformapi/evals"
)

// readmeSuite is the whole suite the README's "Evaluation suites" shows:
// the first yaml block that starts with `name:`.
func readmeSuite(t *testing.T) []byte {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(readme), "```yaml\n")[1:] {
		if body, _, ok := strings.Cut(block, "```"); ok && strings.HasPrefix(body, "name:") {
			return []byte(body)
		}
	}
	t.Fatal("the README shows no whole suite (a yaml block starting with name:)")
	return nil
}

// TestReadme_WholeSuiteExample_ParsesAndPassesScripted: the README is
// enough to write a suite; its example is a valid file that passes.
func TestReadme_WholeSuiteExample_ParsesAndPassesScripted(t *testing.T) {
	f, err := evals.Parse("README.md", readmeSuite(t))
	if err != nil {
		t.Fatal(err)
	}
	rep := evals.Run(context.Background(), target(startServer(t)), []*evals.SuiteFile{f},
		evals.Options{})
	if s := rep.Suites[0]; !s.Pass {
		t.Fatalf("the README's suite fails:\n%v", s.Runs[0].Reasons)
	}
}

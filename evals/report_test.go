package evals

import (
	"bytes"
	"strings"
	"testing"
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

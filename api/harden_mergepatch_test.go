package api_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHarden_BenchmarksMergePatch_MergesMemberByMemberNullRemoves(t *testing.T) {
	e, tok := aiEnv(t)
	m := createModel(t, e, tok, map[string]any{"repo": "org/bench", "benchmarks": map[string]any{"swe": 61.2, "arena": "1402", "mmlu": 80.0}})
	path := "/api/v1/ai/models/" + m["id"].(string)
	r := e.Do("PATCH", path, tok, `{"benchmarks":{"swe":63.5,"arena":null,"gpqa":"55%"}}`, "Content-Type", mergePatch)
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	want := map[string]any{"swe": 63.5, "mmlu": 80.0, "gpqa": "55%"}
	if d := cmp.Diff(want, r.JSON(t)["benchmarks"]); d != "" {
		t.Fatalf("benchmarks (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, e.Do("GET", path, tok, nil).JSON(t)["benchmarks"]); d != "" {
		t.Fatalf("stored benchmarks (-want +got):\n%s", d)
	}
}

func TestHarden_BenchmarksMergePatch_LimitHoldsOnTheResult(t *testing.T) {
	e, tok := aiEnv(t)
	full := map[string]any{}
	for i := range 100 {
		full[fmt.Sprintf("b%03d", i)] = i
	}
	path := "/api/v1/ai/models/" + createModel(t, e, tok, map[string]any{"repo": "org/full", "benchmarks": full})["id"].(string)
	m := assertProblem(t, e.Do("PATCH", path, tok, `{"benchmarks":{"one-more":1}}`, "Content-Type", mergePatch), 422, "validation_failed")
	if m["field"] != "benchmarks" {
		t.Fatalf("field %v", m["field"])
	}
	if r := e.Do("PATCH", path, tok, `{"benchmarks":{"b000":null,"one-more":1}}`, "Content-Type", mergePatch); r.Status != 200 {
		t.Fatalf("swap one member at the limit: %d %s", r.Status, r.Body)
	}
	// A null score is no value on create.
	assertProblem(t, e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "org/nullscore",
		"benchmarks": map[string]any{"x": nil}}), 422, "validation_failed")
}

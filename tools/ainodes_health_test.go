package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/resources"
)

// TestMCP_FleetQuestions_OneCallEach_ResultsMatchTheirOutputSchemas asks
// the questions in one tool call each on the populated world (gpu-1
// serving, without a GPU count; gpu-2 down; model 1 ready on gpu-1, model 2
// nowhere): which nodes are unhealthy and why, the fleet's totals per GPU
// class, the models ready on no node, the ready caches. Every result
// validates against its tool's output schema; a health the enum does not
// know is a tool error naming the argument and its values.
func TestMCP_FleetQuestions_OneCallEach_ResultsMatchTheirOutputSchemas(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	if _, err := e.api.Store.DB().ExecContext(t.Context(),
		`INSERT INTO ai_nodes (hostname, site, gpu_class) VALUES ('gpu-2', 'fra1', 'L40S')`); err != nil {
		t.Fatal(err)
	}
	e.api.Monitor.Set("gpu-2", resources.NodeLive{Online: new(false)})
	e.api.Monitor.Set("gpu-1", resources.NodeLive{Online: new(true), GPUCount: new(8),
		VRAMTotalBytes: new(640e9), VRAMUsedBytes: new(61e9)})
	post := e.do("POST", api.Prefix+"/ai/models", map[string]string{"Authorization": "Bearer " + tok,
		"Content-Type": "application/json"}, `{"repo":"org/nowhere"}`)
	if post.status != 201 {
		t.Fatalf("create a model: %d %s", post.status, post.body)
	}
	schemas := compileOutputSchemas(t, e.mcp)
	c := e.client(tok, nil, false)
	ask := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res := call(t, c, tool, args)
		if res.IsError {
			t.Fatalf("%s %v: %s", tool, args, resultText(t, res))
		}
		validateResult(t, schemas[tool], tool, res.StructuredContent)
		return res.StructuredContent.(map[string]any)
	}
	for _, q := range []struct {
		tool string
		args map[string]any
		path string
		want any
	}{
		{"list-ai-nodes", map[string]any{"health": "offline", "fields": "health,health_reason"}, "items",
			[]any{map[string]any{"hostname": "gpu-2", "health": "offline", "health_reason": "monitoring reports the node down"}}},
		{"list-ai-nodes", map[string]any{"fields": "hostname", "limit": 1}, "gpu_classes", []any{
			map[string]any{"gpu_class": "H100", "nodes": 1.0, "gpus": 8.0, "gpus_unknown_nodes": 0.0,
				"vram_total_bytes": 640e9, "vram_used_bytes": 61e9, "vram_free_bytes": 579e9, "vram_unknown_nodes": 0.0},
			map[string]any{"gpu_class": "L40S", "nodes": 1.0, "gpus": nil, "gpus_unknown_nodes": 1.0,
				"vram_total_bytes": nil, "vram_used_bytes": nil, "vram_free_bytes": nil, "vram_unknown_nodes": 1.0}}},
		{"list-ai-models", map[string]any{"cached": "none", "fields": "repo"}, "items",
			[]any{map[string]any{"id": "2", "repo": "org/nowhere"}}},
		{"list-node-caches", map[string]any{"status": "ready", "fields": "status"}, "items",
			[]any{map[string]any{"hostname": "gpu-1", "model_id": "1", "status": "ready"}}},
	} {
		if diff := cmp.Diff(q.want, ask(q.tool, q.args)[q.path]); diff != "" {
			t.Errorf("%s %v: %s (-want +got):\n%s", q.tool, q.args, q.path, diff)
		}
	}
	p := problemOf(t, call(t, c, "list-ai-nodes", map[string]any{"health": "sick"}))
	validateResult(t, schemas["list-ai-nodes"], "list-ai-nodes error", p)
	if hint, _ := p["hint"].(string); p["field"] != "health" ||
		!contains(hint, "argument health: any of ok, degraded, offline, unreachable, stale") {
		t.Fatalf("problem %v", p)
	}
}

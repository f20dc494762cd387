package tools

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"platformapi/api"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// TestMCP_AgentAsksWhatNodeCachesAndServes_InAtMostThreeCalls plays the
// headline agent question — "which models are cached on gpu-fra1-01 and what
// does it serve now?" — over MCP: one call lists the node's caches (with the
// models' repos), one reads the node's live models.
func TestMCP_AgentAsksWhatNodeCachesAndServes_InAtMostThreeCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	ctx := context.Background()
	db := e.api.Store.DB()
	if _, err := db.ExecContext(ctx, `INSERT INTO ai_nodes (hostname, site, gpu_class) VALUES ('gpu-fra1-01', 'fra1', 'H100')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO ai_models (repo, display_name, status, location, nas_volume, nas_path)
		VALUES ('Qwen/Qwen3-Coder-30B', 'Qwen3 Coder', 'owned', 'nas', 'models', '/models/Qwen/Qwen3-Coder-30B')`); err != nil {
		t.Fatal(err)
	}
	e.api.CentralCopy("Qwen/Qwen3-Coder-30B", map[string][]byte{"config.json": []byte(`{}`)})
	e.api.StartAgent("gpu-fra1-01", nodeagent.Config{})
	serving, repo := "serving", "Qwen/Qwen3-Coder-30B"
	e.api.Monitor.Set("gpu-fra1-01", resources.NodeLive{Status: &serving,
		Models: []resources.NodeModel{{Model: "qwen3-coder", Repo: &repo, State: &serving}}})
	writer := e.token(resources.PermAIWrite)
	copyToNode(t, e, writer)

	agent := e.client(e.token(resources.PermAIRead), nil, false)
	calls := 0
	ask := func(tool string, args map[string]any) map[string]any {
		calls++
		res := call(t, agent, tool, args)
		if res.IsError {
			t.Fatalf("%s: %s", tool, resultText(t, res))
		}
		return res.StructuredContent.(map[string]any)
	}
	var cached []string
	for _, it := range ask("list-node-caches", map[string]any{"hostname": "gpu-fra1-01"})["items"].([]any) {
		if it := it.(map[string]any); it["status"] == "ready" {
			cached = append(cached, it["model_repo"].(string))
		}
	}
	var served []string
	for _, m := range ask("get-ai-node", map[string]any{"hostname": "gpu-fra1-01"})["models"].([]any) {
		served = append(served, m.(map[string]any)["repo"].(string))
	}
	if calls > 3 || !slices.Equal(cached, []string{repo}) || !slices.Equal(served, []string{repo}) {
		t.Fatalf("after %d calls: cached %v, served %v", calls, cached, served)
	}
	assertModelShowsCache(t, agent)
}

// copyToNode copies the model onto the node over REST and waits for the
// operation to succeed.
func copyToNode(t *testing.T, e *env, tok string) {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + tok}
	r := e.do(http.MethodPut, api.Prefix+"/node-caches/gpu-fra1-01/1", auth, "")
	if r.status != http.StatusAccepted {
		t.Fatalf("copy: %d %s", r.status, r.body)
	}
	opID := r.json(t)["id"].(string)
	testkit.Eventually(t, 0, "the copy finished", func() bool {
		return e.do(http.MethodGet, api.Prefix+"/operations/"+opID, auth, "").json(t)["status"] == "succeeded"
	})
}

// assertModelShowsCache reads the model over MCP: the finished copy shows on
// its node_caches and makes it offline-ready.
func assertModelShowsCache(t *testing.T, agent *client.Client) {
	t.Helper()
	res := call(t, agent, "get-ai-model", map[string]any{"model_id": "1"})
	m := res.StructuredContent.(map[string]any)
	caches := m["node_caches"].([]any)
	if res.IsError || len(caches) != 1 || caches[0].(map[string]any)["hostname"] != "gpu-fra1-01" || m["offline_ready"] != true {
		t.Fatalf("model over MCP: %v", m)
	}
}

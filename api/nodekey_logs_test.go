package api_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// TestNodeKeys_CopyAndRefusedKey_NoKeyInTheServerOrAgentLogs: the node keys
// in play — of an agent that copies, of one whose key was rotated away
// (it refuses the server's new key, 401), and that new key — appear in no
// log line, in full or without their prefix, of the server or the agents,
// at debug level; the logs do tell of the work (the copy job, the refused
// node, the copy the agent made).
func TestNodeKeys_CopyAndRefusedKey_NoKeyInTheServerOrAgentLogs(t *testing.T) {
	agentLog := &testkit.LockedBuffer{}
	debug := &slog.HandlerOptions{Level: slog.LevelDebug}
	cfg := nodeagent.Config{Logger: slog.New(slog.NewJSONHandler(agentLog, debug))}
	e, tok, agents := agentEnv(t, apitest.Options{LogLevel: slog.LevelDebug}, cfg)
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	admin := resources.Actor{Label: apitest.AdminEmail}
	rotated, err := e.Portal.MintNodeKey(context.Background(), admin, "gpu-02") // as `portal node-key` does
	if err != nil {
		t.Fatal(err)
	}
	op := apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-02", model)["id"].(string), "failed")
	if er, _ := op["error"].(map[string]any); er["code"] != resources.CodeNodeAgentUnreachable {
		t.Fatalf("copy with a refused key: %v", op["error"])
	}
	logs := map[string]string{"server": e.LogText(), "agents": agentLog.String()}
	told := map[string][]string{"server": {"node_cache_copy", "gpu-02", "node key refused (401)"},
		"agents": {"cache ready", "node key refused"}}
	for name, says := range told {
		for _, s := range says {
			if !strings.Contains(logs[name], s) {
				t.Fatalf("the %s log does not mention %q (a leak would go unseen):\n%s", name, s, logs[name])
			}
		}
	}
	keys := map[string]string{"gpu-01's": agents["gpu-01"].Key, "gpu-02's former": agents["gpu-02"].Key,
		"gpu-02's new": rotated.Key}
	for which, key := range keys {
		for name, text := range logs {
			if strings.Contains(text, strings.TrimPrefix(key, resources.NodeKeyPrefix)) {
				t.Errorf("the %s log holds %s node key", name, which)
			}
		}
	}
}

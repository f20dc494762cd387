package tools

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"platformapi/resources"
)

// rpcResult is one raw JSON-RPC exchange over POST /mcp.
type rpcResult struct {
	response
	result json.RawMessage // the JSON-RPC result, nil on an HTTP or JSON-RPC error
}

// rpc posts one JSON-RPC request with the bearer token (and the extra
// headers) to path (Path plus an optional query) and decodes the answer.
func (e *env) rpc(path, token, method string, params any, extra map[string]string) rpcResult {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		e.t.Fatal(err)
	}
	r := rpcResult{response: e.post(path, token, string(body), extra)}
	if r.status != http.StatusOK {
		return r
	}
	raw := r.body
	if i := strings.Index(string(raw), "data: "); strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") && i >= 0 {
		raw = []byte(strings.TrimSpace(string(raw[i+len("data: "):])))
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		e.t.Fatalf("%s: answer %q: %v", method, r.body, err)
	}
	r.result = msg.Result
	return r
}

// post posts body as it is to path with the bearer token (none when
// empty), the headers of a legacy-era client (protocol 2025-11-25) and the
// extra headers, and returns the HTTP answer.
func (e *env) post(path, token, body string, extra map[string]string) response {
	e.t.Helper()
	h := map[string]string{"Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	for k, v := range extra {
		h[k] = v
	}
	return e.do(http.MethodPost, path, h, body)
}

// toolNames lists the names in a tools/list result.
func toolNames(t *testing.T, result json.RawMessage) []string {
	t.Helper()
	var lt struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &lt); err != nil {
		t.Fatalf("tools/list %s: %v", result, err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// allScopes are every permission key a token can carry.
func allScopes() []string {
	var out []string
	for _, p := range resources.Permissions() {
		if p.TokenAllowed {
			out = append(out, p.Key)
		}
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

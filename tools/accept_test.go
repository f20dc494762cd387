package tools

import (
	"net/http"
	"testing"

	"platformapi/resources"
)

// The MCP streamable HTTP spec says the client MUST list application/json
// and text/event-stream in Accept; it sets the server no rule. This server
// answers every message as one application/json body, the one form it
// writes, whatever Accept names or when it is absent (RFC 9110 §12.5.1),
// as mcp-go's transport and REST do (docs/decisions.md says why).
func TestMCP_AcceptDisregarded_EveryMessageAnsweredInJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	for _, accept := range []string{"", "application/json, text/event-stream", "application/json",
		"text/event-stream", "*/*", "text/html"} {
		t.Run("Accept "+accept, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
			if accept != "" {
				h["Accept"] = accept
			}
			r := e.do(http.MethodPost, Path, h, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" ||
				string(r.body) != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
				t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
		})
	}
}

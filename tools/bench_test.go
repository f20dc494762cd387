package tools

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// BenchmarkMCPToolCall measures one tools/call of get-ai-model over real
// HTTP on loopback: the POST's admission, mcp-go, the in-process GET and its
// SQL, the answer (client and server in one process: bytes and allocations
// count both). Compare with api's BenchmarkGetAIModel, the REST GET it wraps.
func BenchmarkMCPToolCall(b *testing.B) {
	e := apitest.New(b, apitest.Options{Limiter: api.NewLocalLimiter(1<<30, nil),
		Mount: func(srv *api.Server) {
			if _, err := New(srv, Config{}); err != nil {
				b.Fatal(err)
			}
		}})
	if _, err := e.Store.DB().ExecContext(b.Context(), `INSERT INTO ai_models (repo, display_name,
		description) VALUES ('org/model', 'Model', repeat('A longer description. ', 12))`); err != nil {
		b.Fatal(err)
	}
	tok := e.Token(resources.PermAIRead)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call",` +
		`"params":{"name":"get-ai-model","arguments":{"model_id":"1"}}}`
	client := e.HTTP.Client()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, e.HTTP.URL+Path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			answer, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK || strings.Contains(string(answer), `"isError":true`) {
				b.Errorf("status %d: %.300s", res.StatusCode, answer)
				return
			}
		}
	})
}

package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// benchGet measures one authenticated GET through the whole stack: real
// HTTP on loopback, the gate, token lookup in PostgreSQL, and the handler.
func benchGet(b *testing.B, path string) { benchGetEach(b, func(int) string { return path }) }

// benchGetEach is benchGet with a path per request (n counts requests of
// one goroutine), so distinct statements reach the database.
func benchGetEach(b *testing.B, path func(n int) string) {
	e := apitest.New(b, apitest.Options{Limiter: api.NewLocalLimiter(1<<30, nil)})
	seedAI(b, e)
	tok := e.Token(resources.PermAuditRead, resources.PermAPITokensRead, resources.PermAIRead)
	client := e.HTTP.Client()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			n++
			req, _ := http.NewRequest("GET", e.HTTP.URL+path(n), nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != 200 {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}

func BenchmarkWhoami(b *testing.B)        { benchGet(b, "/api/v1/whoami") }
func BenchmarkListAPITokens(b *testing.B) { benchGet(b, "/api/v1/api-tokens") }
func BenchmarkListAIModels(b *testing.B) {
	benchGet(b, "/api/v1/ai/models?sort=param_count_b&limit=50")
}
func BenchmarkListAINodes(b *testing.B) { benchGet(b, "/api/v1/ai/nodes") }
func BenchmarkListAudit(b *testing.B)   { benchGet(b, "/api/v1/audit-events?limit=50") }

// BenchmarkMalformedToken measures the refusal of a token whose checksum is
// wrong: no database work at all.
func BenchmarkMalformedToken(b *testing.B) {
	e := apitest.New(b, apitest.Options{})
	client := e.HTTP.Client()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer svc_pat_00000000000000000000000000000000000000")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
	}
}

// seedAI gives the AI reads something to read: 200 catalogue rows and a
// 20-node roster the simulated monitoring reports.
func seedAI(b *testing.B, e *apitest.Env) {
	ctx := context.Background()
	db := e.Store.DB()
	if _, err := db.ExecContext(ctx, `INSERT INTO ai_models (repo, display_name, param_count_b, size_gb, category)
		SELECT 'org/model-' || g, 'Model ' || g, g * 0.5, g * 1.1, 'coding' FROM generate_series(1, 200) g`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO ai_nodes (hostname, site, gpu_class)
		SELECT 'gpu-' || g, 'fra1', 'H100' FROM generate_series(1, 20) g`); err != nil {
		b.Fatal(err)
	}
	on := true
	for i := 1; i <= 20; i++ {
		e.Monitor.Set(fmt.Sprintf("gpu-%d", i), resources.NodeLive{Online: &on})
	}
}

// BenchmarkGetAIModel measures GET /ai/models/{id}: the row and its node
// caches, a different row each time (of 200).
func BenchmarkGetAIModel(b *testing.B) {
	benchGetEach(b, func(n int) string { return fmt.Sprintf("/api/v1/ai/models/%d", 1+n%200) })
}

package api_test

import (
	"io"
	"net/http"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// benchGet measures one authenticated GET through the whole stack: real
// HTTP on loopback, the gate, token lookup in PostgreSQL, and the handler.
func benchGet(b *testing.B, path string) {
	e := apitest.New(b, apitest.Options{Limiter: api.NewLocalLimiter(1<<30, nil)})
	tok := e.Token(resources.PermAuditRead, resources.PermAPITokensRead)
	client := e.HTTP.Client()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", e.HTTP.URL+path, nil)
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
func BenchmarkListAudit(b *testing.B)     { benchGet(b, "/api/v1/audit-events?limit=50") }

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

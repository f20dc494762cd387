package api_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// benchBrandEnv is an Env without a rate limit and a token that reads the
// licence and reads and writes the brand.
func benchBrandEnv(b *testing.B) (*apitest.Env, string) {
	e := apitest.New(b, apitest.Options{Limiter: api.NewLocalLimiter(1<<30, nil)})
	return e, e.Token(resources.PermLicenceRead, resources.PermBrandWrite)
}

func benchDo(b *testing.B, e *apitest.Env, tok, method, path, body string, want int) {
	req, _ := http.NewRequest(method, e.HTTP.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.HTTP.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d", method, path, res.StatusCode)
	}
}

// BenchmarkGetLicence: the licence read, verified from the replica's
// cache (the stored bundle is read and its signature checked at most every
// 500 ms).
func BenchmarkGetLicence(b *testing.B) {
	e, tok := benchBrandEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		benchDo(b, e, tok, "GET", "/api/v1/licence", "", 200)
	}
}

// BenchmarkPutBrand: a write through the licence gate, the brand's row
// lock, a version bump and its audit event.
func BenchmarkPutBrand(b *testing.B) {
	e, tok := benchBrandEnv(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Sprintf(`{"brand_color":"#%06x","logo_asset_id":null,"favicon_asset_id":null}`, i)
		benchDo(b, e, tok, "PUT", "/api/v1/brand", body, 200)
	}
}

package api_test

import (
	"crypto/sha512"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"platformapi/api/apitest"
)

// TestDocs_PageAndRendererServedByTheBinary: the docs page loads nothing
// from outside (an installation may have no internet), its assets are
// served with their types and match the page's integrity hashes, and
// without JavaScript it links to the contract.
func TestDocs_PageAndRendererServedByTheBinary(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	page := e.Do("GET", "/api/v1/docs", "", nil)
	html := string(page.Body)
	if page.Status != 200 || page.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("docs page: %d %s", page.Status, page.Header.Get("Content-Type"))
	}
	if strings.Contains(html, "http:") || strings.Contains(html, "https:") || strings.Contains(html, `"//`) {
		t.Fatalf("the page references an external URL:\n%s", html)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	if !regexp.MustCompile(`(?s)<noscript>.*href="/api/v1/openapi.json".*</noscript>`).MatchString(html) {
		t.Fatal("no <noscript> link to the contract")
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)" integrity="([^"]+)"`).FindAllStringSubmatch(html, -1)
	wantTypes := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	if len(refs) != 2 {
		t.Fatalf("assets with integrity: %v", refs)
	}
	for _, ref := range refs {
		r := e.Do("GET", ref[1], "", nil)
		ext := ref[1][strings.LastIndex(ref[1], "."):]
		if r.Status != 200 || r.Header.Get("Content-Type") != wantTypes[ext] || len(r.Body) < 1000 {
			t.Fatalf("%s: %d %q %d bytes", ref[1], r.Status, r.Header.Get("Content-Type"), len(r.Body))
		}
		sum := sha512.Sum384(r.Body)
		if got := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); got != ref[2] {
			t.Errorf("%s: integrity %s, page says %s", ref[1], got, ref[2])
		}
	}
	if r := e.Do("GET", "/api/v1/docs/elements-0.0.0/web-components.min.js", "", nil); r.Status != 404 {
		t.Fatalf("unknown asset: %d", r.Status)
	}
	if r := e.Do("GET", "/api/v1/openapi.json", "", nil); r.Status != 200 {
		t.Fatalf("the contract the page shows: %d", r.Status)
	}
}

package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// Issue 18, R5: HEAD answered 405 even on /healthz, and 405 answers named no
// Allow. HEAD is GET without the body; a 405 lists what the path allows.
func TestMethods_HEADLikeGETWithoutBody_405CarriesAllow(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead)
	for _, path := range []string{"/healthz", "/api/v1/meta", "/api/v1/tenants"} {
		get, head := e.Do("GET", path, tok, nil), e.Do("HEAD", path, tok, nil)
		if head.Status != get.Status || get.Status != 200 || len(head.Body) != 0 ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Fatalf("HEAD %s: %d %q, GET %d", path, head.Status, head.Body, get.Status)
		}
	}
	for _, c := range []struct {
		method, path string
		allow        []string
	}{
		{"POST", "/healthz", []string{"GET, HEAD"}},
		{"DELETE", "/api/v1/meta", []string{"GET, HEAD"}},
		{"PUT", "/api/v1/tenants", []string{"GET, HEAD, POST"}},
	} {
		r := e.Do(c.method, c.path, tok, nil)
		assertProblem(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
		if diff := cmp.Diff(c.allow, r.Header.Values("Allow")); diff != "" {
			t.Errorf("%s %s Allow (-want +got):\n%s", c.method, c.path, diff)
		}
	}
}

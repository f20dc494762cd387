package app

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServe_HTTPSPortalURL_StrictTransportSecurityOnEveryAnswer: with an
// https:// --portal-url every answer of the origin (portal pages and
// refusals, the API, the probes) carries Strict-Transport-Security, also
// when a TLS proxy forwards plain HTTP; with an http:// one, or none, no
// answer does (never over plain HTTP, never for a guessed address).
func TestServe_HTTPSPortalURL_StrictTransportSecurityOnEveryAnswer(t *testing.T) {
	paths := []string{"/portal/", "/portal/no-such-page", "/api/v1/meta", "/healthz", "/mcp"}
	for _, c := range []struct {
		name     string
		setup    portalSetup
		wantHSTS string
	}{
		{"https portal URL behind a proxy", portalSetup{plain: true, portalURL: "https://platform.example.test"},
			"max-age=31536000"},
		{"http portal URL", portalSetup{plain: true, portalURL: "http://platform.example.test"}, ""},
		{"no portal URL, TLS here", portalSetup{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := startPortalWith(t, c.setup)
			got, want := map[string]string{}, map[string]string{}
			for _, p := range paths {
				res, _ := w.do(http.MethodGet, w.url+p, nil)
				got[p], want[p] = res.Header.Get("Strict-Transport-Security"), c.wantHSTS
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Strict-Transport-Security by path (-want +got)\n%s", diff)
			}
		})
	}
}

package app

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// signInStart is what GET /portal/login answered: the status, the
// redirect_uri it sent the browser to the provider with ("" none) and
// whether the sign-in cookie was set.
type signInStart struct {
	Status      int
	RedirectURI string
	Cookie      bool
}

// TestPortalSignIn_NoPortalURL_TrustsOnlyALoopbackHost: without
// --portal-url the callback address is taken from the request only when it
// names this machine (a loopback Host from a loopback peer: development);
// any other Host gets a 503 page naming --portal-url and no sign-in
// starts. With --portal-url the Host is never used.
func TestPortalSignIn_NoPortalURL_TrustsOnlyALoopbackHost(t *testing.T) {
	for _, c := range []struct {
		name, portalURL, host string
		want                  signInStart
	}{
		{"loopback host", "", "", signInStart{http.StatusFound, "{url}/portal/callback", true}},
		{"localhost", "", "localhost:{port}", signInStart{http.StatusFound,
			"https://localhost:{port}/portal/callback", true}},
		{"other host", "", "portal.attacker.test", signInStart{Status: http.StatusServiceUnavailable}},
		{"other host, portal URL set", "https://platform.example.test", "portal.attacker.test",
			signInStart{http.StatusFound, "https://platform.example.test/portal/callback", true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := startPortalWith(t, portalSetup{portalURL: c.portalURL})
			u, _ := url.Parse(w.url)
			expand := strings.NewReplacer("{url}", w.url, "{port}", u.Port())
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, w.url+"/portal/login", nil)
			req.Host = expand.Replace(c.host)
			res, err := w.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode == http.StatusServiceUnavailable && !strings.Contains(string(body), "--portal-url") {
				t.Errorf("the refusal does not name --portal-url:\n%s", body)
			}
			got := signInStart{Status: res.StatusCode}
			if loc, err := res.Location(); err == nil {
				got.RedirectURI = loc.Query().Get("redirect_uri")
			}
			for _, ck := range res.Cookies() {
				got.Cookie = got.Cookie || ck.Name == "platformapi_login"
			}
			want := c.want
			want.RedirectURI = expand.Replace(want.RedirectURI)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("GET /portal/login with Host %q (-want +got)\n%s", req.Host, diff)
			}
		})
	}
}

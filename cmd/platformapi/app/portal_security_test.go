package app

import (
	"net/http"
	"testing"
)

// TestPortalCookies_HTTPSPortalURL_SecureEvenFromLoopback: behind a proxy
// on the same host that forwards plain HTTP to a loopback Host (nginx's
// default), the browser still reaches the portal over HTTPS (--portal-url):
// the cookies stay Secure, never sent over plain HTTP.
func TestPortalCookies_HTTPSPortalURL_SecureEvenFromLoopback(t *testing.T) {
	w := startPortalWith(t, portalSetup{plain: true, portalURL: "https://platform.example.test"})
	res, _ := w.do(http.MethodGet, w.url+"/portal/login", nil)
	var login *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "platformapi_login" {
			login = c
		}
	}
	if res.StatusCode != http.StatusFound || login == nil || !login.Secure || !login.HttpOnly {
		t.Fatalf("GET /portal/login: %d, sign-in cookie %+v", res.StatusCode, login)
	}
}

package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
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

// editedClaimsUser is a person whose ID token the provider signs with
// claims edited by edit (an expired token, another issuer's).
type editedClaimsUser struct {
	*mockoidc.MockUser
	edit func(c *mockoidc.IDTokenClaims)
}

// Claims are the person's claims as edit leaves them.
func (u editedClaimsUser) Claims(scope []string, c *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	u.edit(c)
	return u.MockUser.Claims(scope, c)
}

// TestPortalSignIn_IDTokenExpiredOrOfAnotherIssuer_Refused: an ID token
// signed by the provider's own key is refused all the same when it has
// expired or names another issuer; nobody is signed in.
func TestPortalSignIn_IDTokenExpiredOrOfAnotherIssuer_Refused(t *testing.T) {
	for _, tc := range []struct {
		name, logged string // logged: the cause the server's log gives
		edit         func(c *mockoidc.IDTokenClaims)
	}{
		{"expired", "token is expired", func(c *mockoidc.IDTokenClaims) {
			c.IssuedAt = jwt.NewNumericDate(time.Now().Add(-2 * time.Hour))
			c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Hour))
		}},
		{"another issuer", "issued by a different provider", func(c *mockoidc.IDTokenClaims) {
			c.Issuer = "https://evil.example"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startPortal(t, false, false)
			w.person("ada@example.test", "Ada Lovelace")
			res, body := w.signIn(editedClaimsUser{verifiedUser("ada@example.test"), tc.edit}, "r")
			if res.StatusCode != http.StatusForbidden || w.signedIn() {
				t.Fatalf("callback: %d %s", res.StatusCode, body)
			}
			if n := w.count("SELECT count(*) FROM portal_sessions"); n != 0 {
				t.Fatalf("sessions: %d", n)
			}
			if !strings.Contains(w.logs.String(), tc.logged) {
				t.Fatalf("the log does not give the cause %q:\n%s", tc.logged, w.logs)
			}
		})
	}
}

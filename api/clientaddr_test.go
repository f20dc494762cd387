package api_test

import (
	"net/netip"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

var (
	loopbackOnly = netip.MustParsePrefix("127.0.0.1/32")
	clientsNet   = netip.MustParsePrefix("198.51.100.0/24") // the forwarded clients' network
)

// proxiedEnv is a server behind a proxy at 127.0.0.1 (the test's own
// address) serving loopback and clientsNet.
func proxiedEnv(t *testing.T) *apitest.Env {
	return apitest.New(t, apitest.Options{TrustedProxies: []netip.Prefix{loopbackOnly},
		Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), clientsNet}})
}

// auditSourceIP creates a customer with X-Forwarded-For xff and answers
// the audit event's source_ip.
func auditSourceIP(t *testing.T, e *apitest.Env, xff string) any {
	t.Helper()
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "t",
		Scopes: []string{resources.PermTenancyWrite, resources.PermTenancyRead, resources.PermAuditRead}})
	if r := e.Do("POST", "/api/v1/customers", tok, acme(), "X-Forwarded-For", xff); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=customer")
	if len(items) != 1 {
		t.Fatalf("customer events: %d", len(items))
	}
	return items[0]["source_ip"]
}

// TestTrustedProxies_UntrustedPeer_SpoofedForwardedIgnored: a client that
// is no trusted proxy cannot move its address with X-Forwarded-For or
// Forwarded: allowed networks judge the peer, audit and log record it.
func TestTrustedProxies_UntrustedPeer_SpoofedForwardedIgnored(t *testing.T) {
	e := apitest.New(t, apitest.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	if r := e.Do("GET", "/healthz", "", nil, "X-Forwarded-For", "203.0.113.7"); r.Status != 200 {
		t.Fatalf("a served peer claiming an outside address: %d %s", r.Status, r.Body)
	}
	if ip := auditSourceIP(t, e, "203.0.113.7"); ip != "127.0.0.1" {
		t.Fatalf("audit source_ip %v, want the peer", ip)
	}
	if strings.Contains(e.LogText(), "203.0.113.7") {
		t.Fatal("the spoofed address is in the access log")
	}
	inside := apitest.New(t, apitest.Options{Networks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	for _, h := range [][]string{{"X-Forwarded-For", "10.1.2.3"}, {"Forwarded", "for=10.1.2.3"}} {
		assertProblem(t, inside.Do("GET", "/healthz", "", nil, h...), 404, resources.CodeNotFound)
	}
}

// TestTrustedProxies_ForwardedClient_DrivesAllowedNetworks: behind a
// trusted proxy the forwarded address is judged; one outside
// --allowed-networks gets the 404 of a disabled API.
func TestTrustedProxies_ForwardedClient_DrivesAllowedNetworks(t *testing.T) {
	e := proxiedEnv(t)
	cases := []struct {
		header, value string
		want          int
	}{
		{"X-Forwarded-For", "203.0.113.7", 404},
		{"Forwarded", "for=203.0.113.7", 404},
		{"X-Forwarded-For", "198.51.100.5", 200},
		{"Forwarded", "for=198.51.100.5", 200},
		{"X-Forwarded-For", "203.0.113.7, 198.51.100.5", 200}, // the rightmost client counts
		{"X-Forwarded-For", "198.51.100.5, 203.0.113.7", 404},
	}
	for _, tc := range cases {
		if r := e.Do("GET", "/healthz", "", nil, tc.header, tc.value); r.Status != tc.want {
			t.Errorf("%s: %s: %d, want %d", tc.header, tc.value, r.Status, tc.want)
		}
	}
}

// TestTrustedProxies_ForwardedClient_DrivesTokenAllowedIPs: a token's
// allowed IP list judges the forwarded client, not the proxy.
func TestTrustedProxies_ForwardedClient_DrivesTokenAllowedIPs(t *testing.T) {
	e := proxiedEnv(t)
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "office",
		Scopes: []string{resources.PermAIRead}, AllowedIPs: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/28")}})
	if r := e.Do("GET", "/api/v1/whoami", tok, nil, "X-Forwarded-For", "198.51.100.5"); r.Status != 200 {
		t.Fatalf("the allowed client: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil, "X-Forwarded-For", "198.51.100.200"), 401,
		"token_ip_not_allowed")
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_ip_not_allowed") // the proxy itself
}

// TestTrustedProxies_ForwardedClients_SeparateFailedAuthBudgets: two
// clients behind one proxy: one spending its failed authentications does
// not lock the other out.
func TestTrustedProxies_ForwardedClients_SeparateFailedAuthBudgets(t *testing.T) {
	e := proxiedEnv(t)
	unknown := resources.NewTokenValue(resources.TokenKindPersonal)
	for i := range api.AuthFailuresPerMinute {
		if r := e.Do("GET", "/api/v1/meta", unknown, nil, "X-Forwarded-For", "198.51.100.5"); r.Status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	assertProblem(t, e.Do("GET", "/api/v1/meta", unknown, nil, "X-Forwarded-For", "198.51.100.5"), 429,
		"rate_limited")
	assertProblem(t, e.Do("GET", "/api/v1/meta", unknown, nil, "X-Forwarded-For", "198.51.100.6"), 401,
		"token_invalid")
	assertProblem(t, e.Do("GET", "/api/v1/meta", unknown, nil), 401, "token_invalid") // the proxy's own
}

// TestTrustedProxies_ForwardedClient_InAuditAndAccessLog: the audit
// event's source_ip and the access line's client are the forwarded client.
func TestTrustedProxies_ForwardedClient_InAuditAndAccessLog(t *testing.T) {
	e := proxiedEnv(t)
	if ip := auditSourceIP(t, e, "198.51.100.5"); ip != "198.51.100.5" {
		t.Fatalf("audit source_ip %v", ip)
	}
	if want := `"client":"198.51.100.5"`; !strings.Contains(e.LogText(), want) {
		t.Fatalf("no access line with %s:\n%s", want, e.LogText())
	}
}

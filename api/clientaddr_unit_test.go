package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"platformapi/api"
)

// TestClientAddrs_Of_ForwardedOnlyFromTrustedPeers: the rules of the
// client address, header by header.
func TestClientAddrs_Of_ForwardedOnlyFromTrustedPeers(t *testing.T) {
	c := api.NewClientAddrs([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("fd00::/8")})
	cases := []struct {
		name, peer string
		headers    []string // name/value pairs, each added
		want       string
	}{
		{"no headers: the peer", "10.1.1.1:5000", nil, "10.1.1.1"},
		{"untrusted peer: XFF ignored", "192.0.2.9:5000", []string{"X-Forwarded-For", "203.0.113.7"}, "192.0.2.9"},
		{"untrusted peer: Forwarded ignored", "192.0.2.9:5000", []string{"Forwarded", "for=203.0.113.7"},
			"192.0.2.9"},
		{"trusted peer: XFF", "10.1.1.1:5000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"rightmost untrusted: a spoofed left entry loses", "10.1.1.1:5000",
			[]string{"X-Forwarded-For", "198.51.100.1, 203.0.113.7, 10.2.2.2"}, "203.0.113.7"},
		{"several XFF headers read as one list", "10.1.1.1:5000",
			[]string{"X-Forwarded-For", "198.51.100.1", "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"every XFF entry a proxy: the peer", "10.1.1.1:5000", []string{"X-Forwarded-For", "10.3.3.3"},
			"10.1.1.1"},
		{"garbage rightmost: the peer", "10.1.1.1:5000", []string{"X-Forwarded-For", "203.0.113.7, nonsense"},
			"10.1.1.1"},
		{"Forwarded for=", "10.1.1.1:5000", []string{"Forwarded", "for=203.0.113.7;proto=https"}, "203.0.113.7"},
		{"Forwarded quoted IPv6 with port", "10.1.1.1:5000",
			[]string{"Forwarded", `for="[2001:db8::17]:4711", for=10.2.2.2`}, "2001:db8::17"},
		{"XFF wins over Forwarded", "10.1.1.1:5000",
			[]string{"Forwarded", "for=198.51.100.1", "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"IPv6 trusted peer", "[fd00::1]:5000", []string{"X-Forwarded-For", "2001:db8::9"}, "2001:db8::9"},
		{"IPv4-mapped forwarded address unmapped", "10.1.1.1:5000",
			[]string{"X-Forwarded-For", "::ffff:203.0.113.7"}, "203.0.113.7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.peer
			for i := 0; i+1 < len(tc.headers); i += 2 {
				r.Header.Add(tc.headers[i], tc.headers[i+1])
			}
			if got := c.Of(r); got != netip.MustParseAddr(tc.want) {
				t.Fatalf("client %s, want %s", got, tc.want)
			}
		})
	}
}

// TestClientAddrs_NoTrustedProxies_AlwaysThePeer: without
// --trusted-proxies nothing a client sends moves its address.
func TestClientAddrs_NoTrustedProxies_AlwaysThePeer(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.7")
	r.Header.Set("Forwarded", "for=203.0.113.8")
	if got := api.NewClientAddrs(nil).Of(r); got != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("client %s", got)
	}
}

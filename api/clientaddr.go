package api

import (
	"context"
	"net"
	"net/http"
	"net/netip"

	"github.com/realclientip/realclientip-go"
)

// ClientAddrs derives each request's client address: the connection's peer,
// or, when the peer is one of the trusted proxies, the address the proxy
// forwarded — the rightmost X-Forwarded-For address that is not itself a
// trusted proxy, else (no X-Forwarded-For) the rightmost such RFC 7239
// Forwarded "for=". A forwarded list that names no such valid address leaves
// the peer. From any other peer both headers are ignored.
type ClientAddrs struct {
	trusted []netip.Prefix
	xff     realclientip.Strategy
	fwd     realclientip.Strategy
}

// NewClientAddrs trusts the proxies in trusted (none: every request's
// client is its peer).
func NewClientAddrs(trusted []netip.Prefix) *ClientAddrs {
	nets := make([]net.IPNet, 0, len(trusted))
	for _, p := range trusted {
		p = p.Masked()
		nets = append(nets, net.IPNet{IP: p.Addr().AsSlice(),
			Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())})
	}
	return &ClientAddrs{trusted: trusted,
		xff: realclientip.Must(realclientip.NewRightmostTrustedRangeStrategy("X-Forwarded-For", nets)),
		fwd: realclientip.Must(realclientip.NewRightmostTrustedRangeStrategy("Forwarded", nets))}
}

// Of is r's client address (the zero Addr when the peer's is not one).
func (c *ClientAddrs) Of(r *http.Request) netip.Addr {
	peer := parseAddr(r.RemoteAddr)
	if !inNetworks(c.trusted, peer) {
		return peer
	}
	strategy := c.xff
	if len(r.Header.Values("X-Forwarded-For")) == 0 {
		strategy = c.fwd
	}
	if a := parseAddr(strategy.ClientIP(r.Header, r.RemoteAddr)); a.IsValid() {
		return a
	}
	return peer
}

// Middleware stores each request's client address in its context, where
// ClientAddr finds it. An in-process request (Server.Invoke) keeps the
// address its outer request was given.
func (c *ClientAddrs) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, r := ensureFacts(r)
		if !f.hasClient {
			f.client, f.hasClient = c.Of(r), true
		}
		next.ServeHTTP(w, r)
	})
}

// ClientAddr is the request's client address: what the ClientAddrs
// middleware derived, else (a handler outside it) the connection's peer.
// Everything that judges or records the client — allowed networks, token
// IP lists, the failed-authentication limit, audit source_ip, the access
// log, the portal — reads it here.
func ClientAddr(r *http.Request) netip.Addr { return clientAddr(r.Context(), r.RemoteAddr) }

// clientAddr is the address stored in ctx, else remote's.
func clientAddr(ctx context.Context, remote string) netip.Addr {
	if f := factsOf(ctx); f != nil && f.hasClient {
		return f.client
	}
	return parseAddr(remote)
}

// parseAddr parses an address ("host:port", a bare host, or "[v6]");
// invalid input is the zero Addr.
func parseAddr(s string) netip.Addr {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap().WithZone("")
}

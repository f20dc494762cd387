package pgtest

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Proxy is a TCP proxy in front of a test's database that the test can cut,
// as an outage does: Cut breaks every open connection and refuses new ones
// (the port is closed); Restore serves again on the same port.
type Proxy struct {
	t        testing.TB
	upstream string // network address of the server
	network  string // "tcp" or "unix"
	addr     string // the proxy's own address
	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
}

// NewProxy starts a proxy to the database at dsn and returns it with the
// DSN that reaches the database through it. It stops when the test ends.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	p := &Proxy{t: t, network: "tcp", conns: map[net.Conn]struct{}{},
		upstream: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	if strings.HasPrefix(cfg.Host, "/") {
		p.network, p.upstream = "unix", filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	go p.serve(ln)
	t.Cleanup(p.Cut)
	return p, proxiedDSN(dsn, p.addr)
}

// Cut breaks every connection through the proxy and closes its port.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Restore opens the port again after Cut.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Errorf("pgtest: proxy restore: %v", err)
		return
	}
	p.ln = ln
	go p.serve(ln)
}

func (p *Proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	up, err := net.Dial(p.network, p.upstream)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

// track registers both ends, or closes them when the proxy was cut meanwhile.
func (p *Proxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		_ = c.Close()
		_ = up.Close()
		return false
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	return true
}

// proxiedDSN points dsn at addr (host:port), keeping everything else.
func proxiedDSN(dsn, addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dsn + " host=" + host + " port=" + port // keyword/value form: the last one wins
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.Host, u.RawQuery = addr, q.Encode()
	return u.String()
}

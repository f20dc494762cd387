package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"platformapi/resources"
)

// DefaultEvalClock is the instant the embedded evaluation server's clock
// stands at unless --frozen-clock says otherwise.
var DefaultEvalClock = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// EvalServer is a platformapi server on a fresh database holding the demo
// world, serving on a loopback port (or eval --addr's), with the wiring of `serve`: what
// `platformapi eval` plays suites against when no --target is given, and
// what the suites' tests start in-process.
type EvalServer struct {
	URL    string // http://HOST:PORT: a free loopback port unless eval --addr pins it
	Token  string // the demo administrator's token, every token scope
	dsn    string
	dir    string // holds the token pepper file
	frozen time.Time
	stop   func()
}

// StartEvalServer migrates the (fresh) database at dsn, freezes its clock at
// opts.FrozenClock (DefaultEvalClock when zero), builds the demo world and
// serves it on a free loopback port until Close. Simulated outside world;
// provisioning and the pipeline finish at once.
func StartEvalServer(ctx context.Context, opts Options, dsn string) (*EvalServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return StartEvalServerOn(ctx, opts, dsn, ln)
}

// StartEvalServerOn is StartEvalServer serving on ln (`eval --addr`); it
// closes ln when it fails, and Close closes it.
func StartEvalServerOn(ctx context.Context, opts Options, dsn string,
	ln net.Listener) (s *EvalServer, err error) {
	defer func() {
		if err != nil {
			_ = ln.Close()
		}
	}()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if opts.FrozenClock.IsZero() {
		opts.FrozenClock = DefaultEvalClock
	}
	s = &EvalServer{dsn: dsn, frozen: opts.FrozenClock}
	// A name of one length: the demo fleet's cache paths are in results
	// whose sizes two runs compare.
	s.dir = filepath.Join(os.TempDir(), "platformapi-eval-"+rand.Text()[:12])
	if err = os.Mkdir(s.dir, 0o700); err != nil {
		return nil, err
	}
	opts.DatabaseURL, opts.TokenPepperFile = dsn, filepath.Join(s.dir, "token-pepper")
	opts.DataDir = s.dir // the demo fleet's store and caches
	if err := os.WriteFile(opts.TokenPepperFile, []byte(rand.Text()+rand.Text()), 0o600); err != nil {
		return nil, errors.Join(err, os.RemoveAll(s.dir))
	}
	m, err := Open(ctx, opts)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(s.dir))
	}
	if err := s.serve(ctx, m, ln); err != nil {
		m.Close()
		return nil, errors.Join(err, os.RemoveAll(s.dir))
	}
	return s, nil
}

// serve builds the world, starts the worker and serves on ln.
func (s *EvalServer) serve(ctx context.Context, m *Main, ln net.Listener) error {
	o := ServeOptions{Demo: true, PollInterval: 20 * time.Millisecond, GatewayURL: resources.DefaultGatewayBaseURL}
	reg := m.newRegistry()
	h, err := m.prepare(ctx, o, reg)
	if err != nil {
		return err
	}
	tok, err := m.buildDemo(ctx, h)
	if err != nil {
		return err
	}
	stopBackground, err := m.background(ctx, o, reg)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	s.URL, s.Token = "http://"+dialAddr(ln.Addr()), tok.Value
	s.stop = func() {
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
		stopBackground()
		m.Close()
	}
	return nil
}

// dialAddr is where a client on this host reaches a listener: its address,
// with 127.0.0.1 for an unspecified host (eval --addr :8080, 0.0.0.0:8080;
// Go listens on both IPv4 and IPv6 there).
func dialAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// Portal runs `platformapi portal ARGS…` on the server's database with its
// pepper and clock, and returns the printed JSON.
func (s *EvalServer) Portal(ctx context.Context, args []string) ([]byte, error) {
	return runPortal(ctx, []string{"--database-url", s.dsn, "--token-pepper-file", filepath.Join(s.dir, "token-pepper"),
		"--frozen-clock", s.frozen.Format(time.RFC3339Nano)}, args)
}

// runPortal runs one portal command in-process with the global flags.
func runPortal(ctx context.Context, global, args []string) ([]byte, error) {
	var out bytes.Buffer
	root := NewRootCommand(&out, io.Discard)
	root.SetArgs(append(append(append(global, "--log-level", "error"), "portal"), args...))
	err := root.ExecuteContext(ctx)
	return out.Bytes(), err
}

// Close stops the server and removes its files; the database stays (its
// owner drops it).
func (s *EvalServer) Close() {
	if s.stop != nil {
		s.stop()
	}
	_ = os.RemoveAll(s.dir)
}

// randomSuffix names fresh databases.
func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

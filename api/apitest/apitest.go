// Package apitest runs the real API for tests: a fresh migrated PostgreSQL
// database per test, the real store, the real HTTP server on loopback, an
// administrator and an enabled API.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/codehostsim"
	"platformapi/resources/monitoringsim"
	"platformapi/resources/pipelinesim"
)

// AdminEmail is the administrator every Env starts with.
const AdminEmail = "admin@example.test"

// Pepper is the token pepper of every Env.
var Pepper = resources.Pepper("test-pepper-0123456789abcdef")

// Clock is a settable clock shared by the server and the test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now reads the clock.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Env is one running API over its own database.
type Env struct {
	T        testing.TB
	Store    *bunstore.Store
	Portal   resources.Portal
	Server   *api.Server
	HTTP     *httptest.Server
	Clock    *Clock
	Logs     *bytes.Buffer        // everything the server logged; read with LogText
	Lookups  *CountingCredentials // the real store, counting token lookups
	VCS      *codehostsim.Sim     // the simulated code host, with fault injection
	Pipeline *pipelinesim.Sim     // the simulated release pipeline, reporting to the store
	Worker   *bunstore.Worker     // the background worker (started)
	Monitor  *monitoringsim.Sim   // the simulated monitoring (used unless Options.Monitor is set)
	logs     *lockedWriter
}

// Options adjust an Env; zero values take the defaults.
type Options struct {
	Pepper   resources.Pepper // nil: Pepper; use Unconfigured for none
	Limiter  api.RateLimiter
	Disabled bool              // leave the API off
	Mount    func(*api.Server) // adds adapters (MCP) before the server starts
	// Idempotency wraps the store's idempotency keeping (fault injection).
	Idempotency func(resources.Idempotency) resources.Idempotency
	// Monitor replaces the simulated monitoring (e.g. a Prometheus client of a fake).
	Monitor resources.Monitor
}

func idem(o Options, st *bunstore.Store) resources.Idempotency {
	if o.Idempotency != nil {
		return o.Idempotency(st)
	}
	return st
}

func monitor(o Options, sim *monitoringsim.Sim) resources.Monitor {
	if o.Monitor != nil {
		return o.Monitor
	}
	return sim
}

// Unconfigured is a pepper that counts as not configured.
var Unconfigured = resources.Pepper("x")

// New starts an Env: database, store, administrator, API enabled, server.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	db := pgtest.DB(t)
	st := bunstore.NewStore(db)
	pepper := o.Pepper
	if pepper == nil {
		pepper = Pepper
	}
	e := &Env{T: t, Store: st, Portal: bunstore.TokenMinter{Store: st, Pepper: pepper},
		Clock: &Clock{t: time.Now().UTC()}, Logs: &bytes.Buffer{}, VCS: codehostsim.New(), Monitor: monitoringsim.New()}
	st.SetClock(e.Clock.Now)
	if _, err := e.Portal.CreateUser(ctx, "", resources.NewUser{Email: AdminEmail, DisplayName: "Admin", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	if !o.Disabled {
		if _, err := e.Portal.SetAPIEnabled(ctx, AdminEmail, true); err != nil {
			t.Fatal(err)
		}
	}
	key, err := st.ServerKey(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	e.logs = &lockedWriter{w: e.Logs}
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	e.Lookups = &CountingCredentials{Credentials: st}
	e.Server = api.New(api.Config{Pepper: pepper, CursorKey: key, Limiter: o.Limiter, Logger: logger, Now: e.Clock.Now},
		api.Services{Settings: st, Credentials: e.Lookups, Tokens: st, Audit: st, Idempotency: idem(o, st),
			Customers: st, Tenants: st, Users: st, CodeHost: e.VCS, Operations: st, Projects: st, Releases: st,
			AIModels: st, AIGateway: st, AINodes: st, NodeCaches: st, Monitoring: monitor(o, e.Monitor)})
	if o.Mount != nil {
		o.Mount(e.Server)
	}
	e.startWorker(logger)
	e.HTTP = httptest.NewServer(e.Server.Router())
	t.Cleanup(e.HTTP.Close)
	return e
}

// startWorker runs the background worker with the simulated pipeline until
// the test ends.
func (e *Env) startWorker(logger *slog.Logger) {
	e.Pipeline = pipelinesim.New(e.Store, 0, pipelinesim.WithLogger(logger))
	w, err := e.Store.NewWorker(bunstore.WorkerConfig{Pipeline: e.Pipeline, PollInterval: 20 * time.Millisecond, Logger: logger})
	if err != nil {
		e.T.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	e.Worker = w
	e.T.Cleanup(func() {
		e.Pipeline.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.StopAndCancel(ctx)
	})
}

// LogText returns what the server logged so far.
func (e *Env) LogText() string {
	e.logs.mu.Lock()
	defer e.logs.mu.Unlock()
	return e.Logs.String()
}

// Token mints a personal token for the administrator with the given scopes.
func (e *Env) Token(scopes ...string) string {
	return e.TokenFor(AdminEmail, resources.NewToken{Name: "test", Scopes: scopes})
}

// TokenFor mints a token as the person as; Days defaults to 90.
func (e *Env) TokenFor(as string, t resources.NewToken) string {
	e.T.Helper()
	if t.Days == 0 {
		t.Days = resources.TokenDefaultDays
	}
	m, err := e.Portal.CreateToken(context.Background(), as, t)
	if err != nil {
		e.T.Fatal(err)
	}
	return m.Value
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map (fails the test when it is not an object).
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Do sends a request; body may be nil, a string (sent as is) or a value
// (sent as JSON). headers are name/value pairs.
func (e *Env) Do(method, path, token string, body any, headers ...string) *Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.HTTP.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.HTTP.Client().Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write appends p under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// CountingCredentials counts the token lookups that reach the real store.
type CountingCredentials struct {
	resources.Credentials
	n atomic.Int64
}

// CredentialByHash counts and delegates.
func (c *CountingCredentials) CredentialByHash(ctx context.Context, hash []byte) (*resources.Credential, error) {
	c.n.Add(1)
	return c.Credentials.CredentialByHash(ctx, hash)
}

// Count is how many lookups reached the store.
func (c *CountingCredentials) Count() int64 { return c.n.Load() }

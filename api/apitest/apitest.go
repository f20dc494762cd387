// Package apitest runs the real API for tests: a fresh migrated PostgreSQL
// database per test, the real store, the real HTTP server on loopback, an
// administrator and an enabled API.
package apitest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/codehostsim"
	"platformapi/resources/licencetest"
	"platformapi/resources/monitoringsim"
	"platformapi/resources/nodeagent"
	"platformapi/resources/pipelinesim"
	"platformapi/resources/testkit"
	"platformapi/resources/tracing"
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
	Lookups  *CountingCredentials // the real store, counting token lookups
	VCS      *codehostsim.Sim     // the simulated code host, with fault injection
	Pipeline *pipelinesim.Sim     // the simulated release pipeline, reporting to the store
	Worker   *bunstore.Worker     // the background worker (started)
	Monitor  *monitoringsim.Sim   // the simulated monitoring (used unless Options.Monitor is set)
	Metrics  *prometheus.Registry // the server's metrics, served at /metrics
	Proxy    *pgtest.Proxy        // between server and database, when Options.Proxy
	Fleet    *nodeagent.Fleet     // the node agents of the roster (start some with StartAgent)
	// StoreRoot is the central model store every agent of the Env reads
	// (write central copies with nodeagent.WriteCentralCopy).
	StoreRoot string
	logs      *testkit.LockedBuffer // everything the server logged; read with LogText
	// workerConfig is the configuration of e.Worker (see StartWorker).
	workerConfig bunstore.WorkerConfig
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
	// NoLicence starts without a licence (every write 403 licence_required);
	// by default a valid test licence (licencetest.Payload) is installed.
	NoLicence bool
	// StatementTimeout is the PostgreSQL statement_timeout of the server's
	// connections (0: none).
	StatementTimeout time.Duration
	// RequestTimeout and BodyReadTimeout set api.Config's (0: its defaults).
	RequestTimeout, BodyReadTimeout time.Duration
	// Proxy puts a pgtest.Proxy between the server and its database
	// (Env.Proxy), so a test can cut the database off.
	Proxy bool
	// CodeHost wraps the simulated code host (fault injection beyond the simulator's).
	CodeHost func(resources.CodeHost) resources.CodeHost
	// CredentialCache caches credentials for this long (0: no cache), with
	// the store's changes fed to the server in-process (as Redis would).
	CredentialCache time.Duration
	// NoChangeFeed leaves the server without the change feed (missed
	// events): no cached credential is dropped, no changed gateway key is
	// read again until the re-check interval.
	NoChangeFeed bool
	// AgentPolicy says how cache jobs poll and retry node agents (zero:
	// polls every 20 ms, retries 3 times from 10 ms on).
	AgentPolicy bunstore.AgentPolicy
	// ReconcileInterval is the node cache reconcile's interval (0: an hour,
	// so that only tests that ask for it see it run after the first).
	ReconcileInterval time.Duration
	// ViewRecheck is how often the views of live gateway keys and live
	// tokens are reloaded whole (0: api.DefaultRecheck).
	ViewRecheck time.Duration
	// Networks are the client networks served (nil: api.DefaultNetworks).
	Networks []netip.Prefix
	// TrustedProxies are the proxies whose forwarded client address counts
	// (nil: none; the test's own requests come from 127.0.0.1).
	TrustedProxies []netip.Prefix
	// LogLevel is the server log's level (0: info).
	LogLevel slog.Level
	// Tracing turns tracing on for the server, the store, the worker and
	// the node agents' client (nil: off, as without OTEL_* configuration).
	Tracing *tracing.Tracing
}

// GatewayKeyUseFlush is how often an Env writes the gateway keys' last
// uses: short, so tests see them within their polling deadline.
const GatewayKeyUseFlush = 50 * time.Millisecond

func codeHost(o Options, sim *codehostsim.Sim) resources.CodeHost {
	if o.CodeHost != nil {
		return o.CodeHost(sim)
	}
	return sim
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
	e := &Env{T: t}
	pepper := o.Pepper
	if pepper == nil {
		pepper = Pepper
	}
	e.openStore(o, pepper)
	e.seed(o)
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: o.LogLevel}))
	e.Server = api.New(e.serverConfig(o, pepper, logger),
		api.Services{Settings: e.Store, Credentials: e.Lookups, Tokens: e.Store, Audit: e.Store,
			Idempotency: idem(o, e.Store), Customers: e.Store, Tenants: e.Store, Users: e.Store,
			CodeHost: codeHost(o, e.VCS), Operations: e.Store, Projects: e.Store, Releases: e.Store,
			AIModels: e.Store, AIGateway: e.Store, AINodes: e.Store, NodeCaches: e.Store,
			Monitoring: monitor(o, e.Monitor), NodeAgents: e.Fleet, Licences: e.Store, Brands: e.Store,
			Readiness: e.Store})
	if !o.NoChangeFeed {
		e.Store.SetChangePublisher(localFeed{e.Server})
	}
	if o.Mount != nil {
		o.Mount(e.Server)
	}
	e.startWorker(logger, o)
	e.runViews()
	e.recordStatuses() // after the server closes: registered before it
	e.HTTP = httptest.NewServer(e.Server.Router())
	t.Cleanup(e.HTTP.Close)
	return e
}

// openStore opens the Env's store over its own database with the clock,
// the token-minting portal, the fleet of node agents and the simulators.
func (e *Env) openStore(o Options, pepper resources.Pepper) {
	st := bunstore.NewStore(e.openDB(o))
	e.Store, e.Portal = st, bunstore.TokenMinter{Store: st, Pepper: pepper}
	st.SetTracing(o.Tracing)
	e.Fleet, e.StoreRoot = nodeagent.NewFleet(st, nodeagent.NewClient(o.Tracing.Client()), pepper), e.T.TempDir()
	e.Clock, e.logs, e.VCS, e.Monitor = &Clock{t: time.Now().UTC()}, &testkit.LockedBuffer{}, codehostsim.New(),
		monitoringsim.New()
	e.Lookups, e.Metrics = &CountingCredentials{Credentials: st}, prometheus.NewRegistry()
	st.SetClock(e.Clock.Now)
}

// seed creates the administrator and, unless the options say otherwise,
// turns the API on and installs a valid licence.
func (e *Env) seed(o Options) {
	ctx := context.Background()
	if _, err := e.Portal.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: AdminEmail,
		DisplayName: "Admin", Roles: []string{"admin"}}); err != nil {
		e.T.Fatal(err)
	}
	if !o.Disabled {
		if _, err := e.Portal.SetAPIEnabled(ctx, resources.Actor{Label: AdminEmail}, true); err != nil {
			e.T.Fatal(err)
		}
	}
	if !o.NoLicence {
		e.InstallLicence(licencetest.Payload(e.InstallationID(), e.Clock.Now()))
	}
}

// serverConfig is the API's configuration under the options.
func (e *Env) serverConfig(o Options, pepper resources.Pepper, logger *slog.Logger) api.Config {
	key, err := e.Store.ServerKey(context.Background(), "cursor")
	if err != nil {
		e.T.Fatal(err)
	}
	cfg := api.Config{Pepper: pepper, CursorKey: key, Limiter: o.Limiter, Logger: logger, Now: e.Clock.Now,
		LicenceKeys: []ed25519.PublicKey{licencetest.PublicKey()}, Metrics: e.Metrics, MetricsGatherer: e.Metrics,
		RequestTimeout: o.RequestTimeout, BodyReadTimeout: o.BodyReadTimeout, Networks: o.Networks,
		ViewRecheck: o.ViewRecheck, GatewayKeyUseFlush: GatewayKeyUseFlush,
		TrustedProxies: o.TrustedProxies, Tracing: o.Tracing}
	if o.CredentialCache > 0 {
		cfg.CredentialCache = api.NewCredentialCache(o.CredentialCache, e.Clock.Now, nil)
	}
	return cfg
}

// openDB opens the test's database with the options' statement timeout,
// through a proxy when asked.
func (e *Env) openDB(o Options) *bun.DB {
	dsn := pgtest.DSN(e.T)
	if o.Proxy {
		e.Proxy, dsn = pgtest.NewProxy(e.T, dsn)
	}
	db, err := bunstore.Open(context.Background(), dsn, bunstore.WithStatementTimeout(o.StatementTimeout))
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { _ = db.Close() })
	return db
}

// InstallationID is the installation id of the Env's database.
func (e *Env) InstallationID() string {
	e.T.Helper()
	st, err := e.Store.StoredLicence(context.Background())
	if err != nil {
		e.T.Fatal(err)
	}
	return st.InstallationID
}

// InstallLicence signs p with the test vendor key and installs it: before
// the server runs, directly as the operator's test setup ("ops:apitest");
// once it runs, with PUT /licence as the administrator, so the server sees
// it at once. It fails the test when the bundle does not verify now.
func (e *Env) InstallLicence(p resources.LicencePayload) {
	e.T.Helper()
	bundle := licencetest.Bundle(p)
	if e.HTTP != nil {
		r := e.Do("PUT", api.Prefix+"/licence", e.Token(resources.PermLicenceAdmin), map[string]string{"bundle": bundle})
		if r.Status != http.StatusOK {
			e.T.Fatalf("PUT /licence: %d %s", r.Status, r.Body)
		}
		return
	}
	v := resources.LicenceVerifier{Keys: []ed25519.PublicKey{licencetest.PublicKey()}}
	if _, err := v.Verify(bundle, e.InstallationID(), e.Clock.Now()); err != nil {
		e.T.Fatal(err)
	}
	if _, err := e.Store.InstallLicence(context.Background(), resources.Actor{Label: "ops:apitest"}, bundle, p); err != nil {
		e.T.Fatal(err)
	}
}

// LogText returns what the server logged so far.
func (e *Env) LogText() string {
	return e.logs.String()
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
	m, err := e.Portal.CreateToken(context.Background(), resources.Actor{Label: as}, t)
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

// PollOperation polls GET /operations/{id} as tok until the operation has
// status (at most 30 s) and returns it; it fails at once when the operation
// finished with another status.
func PollOperation(t testing.TB, e *Env, tok, id, status string) map[string]any {
	t.Helper()
	var last map[string]any
	testkit.Eventually(t, 30*time.Second, "operation "+id+" "+status, func() bool {
		r := e.Do(http.MethodGet, api.Prefix+"/operations/"+id, tok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("poll %s: %d %s", id, r.Status, r.Body)
		}
		last = r.JSON(t)
		st, _ := last["status"].(string)
		if st != status && resources.Finished(st) {
			t.Fatalf("operation %s ended %s, want %s: %v", id, st, status, last)
		}
		return st == status
	})
	return last
}

// CursorParam is "&cursor=" and the escaped cursor, or "" for none (the
// first page: an empty cursor is one the list did not issue, 400).
func CursorParam(cursor string) string {
	if cursor == "" {
		return ""
	}
	return "&cursor=" + url.QueryEscape(cursor)
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/api"
	"platformapi/api/portal"
	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/codehostsim"
	"platformapi/resources/gitlab"
	"platformapi/resources/pipelinesim"
	"platformapi/resources/webhook"
	"platformapi/tools"
)

// ServeOptions configure `serve`.
type ServeOptions struct {
	Addr     string
	Demo     bool
	Networks []netip.Prefix // nil: loopback and private ranges
	// TrustedProxies are the reverse proxies whose forwarded client address
	// counts (api.ClientAddrs); nil: none.
	TrustedProxies []netip.Prefix
	TLSCertFile    string // with TLSKeyFile: HTTPS on Addr and MetricsAddr, renewed files picked up
	TLSKeyFile     string
	AllowedOrigins []string // MCP Origin allow-list
	GitLabURL      string   // code host; empty: the simulated one
	GitLabToken    string
	WebhookURL     string        // release pipeline; empty: the simulated one
	WebhookSecret  string        // signs webhook bodies (HMAC-SHA256)
	ProvisionDelay time.Duration // simulated provisioning time
	PipelineDelay  time.Duration // simulated pipeline run time
	JobTimeout     time.Duration // a job running longer is cancelled
	RescueAfter    time.Duration // a job running longer is presumed lost and retried
	GatewayURL     string        // AI gateway base URL, ending in /v1
	PrometheusURL  string        // monitoring of the AI nodes; empty: the simulated one
	PollInterval   time.Duration // how often the worker looks for jobs; 0: 1 second
	// ReconcileInterval is how often node caches are compared with what the
	// node agents report (0: bunstore.DefaultReconcileInterval).
	ReconcileInterval time.Duration
	AgentPolicy       bunstore.AgentPolicy // how cache jobs poll and retry node agents
	MetricsAddr       string               // separate listener for /metrics; empty: on Addr
	RequestTimeout    time.Duration        // bounds each request
	// StopDelay is how long serve keeps serving after SIGTERM, /readyz
	// answering 503, before it drains (0: it drains at once).
	StopDelay   time.Duration
	AuthRecheck time.Duration // longest a cached credential is trusted (0: 30 s)
	Portal      PortalOptions // the people's portal at /portal/
}

// PortalOptions configure the people's portal's sign-in with OpenID
// Connect; no issuer: the portal says sign-in is not configured.
type PortalOptions struct {
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	URL              string // external base URL; empty: each request's scheme and host
}

// pipeline picks the release pipeline: the webhook when configured, else
// the in-process simulated one, which reports back to the store.
func (m *Main) pipeline(o ServeOptions) resources.ReleasePipeline {
	if o.WebhookURL != "" {
		return webhook.New(o.WebhookURL, []byte(o.WebhookSecret), m.tracing.Client())
	}
	m.opts.Logger.Warn("no release pipeline configured (--pipeline-webhook-url): using the simulated pipeline")
	return pipelinesim.New(m.store, o.PipelineDelay, pipelinesim.WithLogger(m.opts.Logger))
}

// startWorker starts the background worker of long-running operations.
func (m *Main) startWorker(ctx context.Context, o ServeOptions, reg prometheus.Registerer) (*bunstore.Worker, error) {
	w, err := m.store.NewWorker(bunstore.WorkerConfig{Pipeline: m.pipeline(o), ProvisionDelay: o.ProvisionDelay,
		JobTimeout: o.JobTimeout, RescueAfter: o.RescueAfter, PollInterval: o.PollInterval, Logger: m.opts.Logger,
		Metrics: reg, Agents: m.fleet, AgentPolicy: o.AgentPolicy, ReconcileInterval: o.ReconcileInterval})
	if err != nil {
		return nil, err
	}
	return w, w.Start(context.WithoutCancel(ctx))
}

// codeHost picks the code host: GitLab when a URL is configured, else the
// in-process simulated one (demo and development).
func (m *Main) codeHost(o ServeOptions) resources.CodeHost {
	if o.GitLabURL != "" {
		return gitlab.New(o.GitLabURL, o.GitLabToken, m.tracing.Client())
	}
	m.opts.Logger.Warn("no GitLab configured (--gitlab-url): using the simulated code host")
	return codehostsim.New()
}

// sweepExpired deletes expired idempotency keys and ended portal
// sessions now and every interval until ctx ends.
func (m *Main) sweepExpired(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := m.store.DeleteExpired(ctx); err != nil && ctx.Err() == nil {
			m.opts.Logger.Error("deleting expired idempotency keys", "error", err)
		} else if n > 0 {
			m.opts.Logger.Info("deleted expired idempotency keys", "count", n)
		}
		if n, err := m.store.DeleteEndedSessions(ctx); err != nil && ctx.Err() == nil {
			m.opts.Logger.Error("deleting ended portal sessions", "error", err)
		} else if n > 0 {
			m.opts.Logger.Info("deleted ended portal sessions", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Handler builds the HTTP handler: the API under /api/v1, MCP at /mcp, the
// probes and (unless it has its own listener) /metrics, registering the
// API's metrics on reg; every answer says Strict-Transport-Security when
// the portal's URL is https:// (one origin).
func (m *Main) Handler(ctx context.Context, o ServeOptions, reg *prometheus.Registry) (http.Handler, error) {
	verifier, err := m.licenceVerifier(o.Demo)
	if err != nil {
		return nil, err
	}
	cfg, err := m.apiConfig(ctx, o, reg, verifier)
	if err != nil {
		return nil, err
	}
	monitor, err := m.monitor(ctx, o)
	if err != nil {
		return nil, err
	}
	srv := api.New(cfg,
		api.Services{Settings: m.store, Credentials: m.store, Tokens: m.store, Audit: m.store,
			Idempotency: m.store, Customers: m.store, Tenants: m.store, Users: m.store, CodeHost: m.codeHost(o),
			Operations: m.store, Projects: m.store, Releases: m.store, AIModels: m.store, AIGateway: m.store,
			AINodes: m.store, NodeCaches: m.store, Monitoring: monitor, NodeAgents: m.fleet, Licences: m.store,
			Brands: m.store, Readiness: m.store})
	if _, err := tools.New(srv, tools.Config{AllowedOrigins: o.AllowedOrigins}); err != nil {
		return nil, err
	}
	if err := srv.LoadViews(ctx); err != nil {
		return nil, err
	}
	m.stopGateway = runUntilStopped(context.WithoutCancel(ctx), srv.RunViews)
	if m.shared != nil {
		m.runFeed(ctx, func(ctx context.Context) { m.shared.Run(ctx, srv) })
	} else {
		m.runFeed(ctx, func(ctx context.Context) { m.feed.Run(ctx, srv) })
	}
	if err := m.mountPortal(ctx, srv.Router(), o.Portal, verifier, o.Demo); err != nil {
		return nil, err
	}
	return portal.StrictTransport(o.Portal.URL, srv.Router()), nil
}

// apiConfig is the API's configuration under o: its cursor key, licence
// keys, credential cache, and the Redis-shared limits (or the PostgreSQL
// change feed) with their metrics on reg.
func (m *Main) apiConfig(ctx context.Context, o ServeOptions, reg *prometheus.Registry,
	verifier resources.LicenceVerifier) (api.Config, error) {
	key, err := m.store.ServerKey(ctx, "cursor")
	if err != nil {
		return api.Config{}, err
	}
	var gatherer prometheus.Gatherer = reg
	if o.MetricsAddr != "" {
		gatherer = nil
	}
	cfg := api.Config{Pepper: m.pepper, CursorKey: key, Networks: o.Networks, Logger: m.opts.Logger,
		GatewayBaseURL: o.GatewayURL, Now: m.now, LicenceKeys: verifier.Keys, Metrics: reg, MetricsGatherer: gatherer,
		RequestTimeout: o.RequestTimeout, ViewRecheck: o.AuthRecheck, TrustedProxies: o.TrustedProxies,
		Tracing: m.tracing, Stopping: m.stopping}
	cfg.CredentialCache = api.NewCredentialCache(o.AuthRecheck, nil, reg)
	if m.shared != nil {
		m.shared.Register(reg)
		cfg.Limiter, cfg.AuthFailures = m.shared, m.shared.AuthFailures()
	} else {
		m.feed.Register(reg)
	}
	return cfg, nil
}

// mountPortal mounts the people's portal at /portal/ on the root router,
// with the demo sign-in in demo mode. Its licence installs trust what the
// API's PUT /licence trusts (v).
func (m *Main) mountPortal(ctx context.Context, r chi.Router, o PortalOptions, v resources.LicenceVerifier,
	demo bool) error {
	key, err := m.store.ServerKey(ctx, "portal-login")
	if err != nil {
		return err
	}
	if o.OIDCIssuer == "" {
		m.opts.Logger.Warn("no OpenID provider configured (--oidc-issuer): the portal cannot sign anyone in")
	} else if o.URL == "" {
		m.opts.Logger.Warn("no --portal-url: sign-in works only from this machine (localhost); " +
			"set it to the address browsers use")
	}
	h := portal.New(portal.Config{Issuer: o.OIDCIssuer, ClientID: o.OIDCClientID, ClientSecret: o.OIDCClientSecret,
		BaseURL: o.URL, Sessions: m.store, Actions: m.Portal(), Store: m.store, Licence: v, Demo: demo,
		LoginKey: key, Now: m.now, Logger: m.opts.Logger})
	r.Handle("/portal", h)
	r.Handle("/portal/*", h)
	return nil
}

// runUntilStopped runs run in a goroutine until the returned function is
// called, which cancels it and waits for it to return.
func runUntilStopped(ctx context.Context, run func(context.Context)) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); run(ctx) }()
	return func() { cancel(); <-done }
}

// runFeed runs the change feed until ctx ends or Close stops it (Close waits
// for it, so its connection is gone before the database is closed).
func (m *Main) runFeed(ctx context.Context, run func(context.Context)) {
	m.stopFeed = runUntilStopped(ctx, run)
}

// Run takes its addresses, migrates the database, freezes its clock when
// asked, optionally sets up the demo world, starts the worker and the idempotency-key sweep, and
// serves HTTP on o.Addr (and /metrics on o.MetricsAddr) until ctx ends
// and o.StopDelay is over (see stopLater).
func (m *Main) Run(ctx context.Context, o ServeOptions, out io.Writer) error {
	if o.Demo && !m.pepper.Configured() { // before any change: the demo mints tokens and node keys
		return errors.New("serve --demo needs the token pepper, and this database is not the private cluster " +
			"(which makes one): give it with --token-pepper-file FILE or PLATFORMAPI_TOKEN_PEPPER (at least 16 " +
			"characters, e.g. from `openssl rand -base64 32`); nothing was changed")
	}
	tlsConfig, err := serverTLS(o.TLSCertFile, o.TLSKeyFile, m.opts.Logger) // before any change
	if err != nil {
		return err
	}
	lns, err := bind(o) // before any change too
	if err != nil {
		return err
	}
	defer lns.close()
	ctx, stopped := m.stopLater(ctx, o.StopDelay, stopSignals)
	defer stopped()
	reg := m.newRegistry()
	h, err := m.prepare(ctx, o, reg)
	if err != nil {
		return err
	}
	if o.Demo {
		if err := m.setupDemo(ctx, h, out); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	stop, err := m.background(ctx, o, reg)
	if err != nil {
		return err
	}
	defer stop()
	return m.listen(ctx, o, lns, h, reg, tlsConfig)
}

// prepare migrates, freezes the clock when asked and builds the handler,
// registering its metrics on reg.
func (m *Main) prepare(ctx context.Context, o ServeOptions, reg *prometheus.Registry) (http.Handler, error) {
	if err := m.migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := m.freezeDatabaseClock(ctx); err != nil {
		return nil, err
	}
	if !m.pepper.Configured() {
		m.opts.Logger.Warn("no token pepper configured: every authenticated request answers 503 api_tokens_unconfigured")
	}
	if m.opts.LicencePublicKey == "" && !o.Demo {
		m.opts.Logger.Warn("no licence public key configured (--licence-public-key): no bundle verifies, writes answer 403")
	}
	return m.Handler(ctx, o, reg)
}

// background starts the idempotency-key sweep and the worker; the
// returned function stops both.
func (m *Main) background(ctx context.Context, o ServeOptions, reg prometheus.Registerer) (func(), error) {
	sweep, cancel := context.WithCancel(ctx)
	go m.sweepExpired(sweep, 10*time.Minute)
	worker, err := m.startWorker(ctx, o, reg)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("worker: %w", err)
	}
	return func() {
		cancel()
		stop, cancelStop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancelStop()
		_ = worker.Stop(stop)
	}, nil
}

// defaultGCPercent is the collector's target of a serving process when GOGC
// is unset: the heap may grow to 2.5 times what is live (Go's default:
// twice). The live heap of a replica is small (about 10 MB) and a request
// allocates some 10 to 40 KB, so with Go's default the collector runs
// dozens of times a second under load; 150 cuts that work by a third. 200
// halved it but took the peak RSS at 64 connections to 99.5 MB after a full
// bench run, against the target of under 100 MB (docs/benchmarks.md).
const defaultGCPercent = 150

// applyGCDefault sets the collector's target to defaultGCPercent unless the
// operator chose one with GOGC.
func applyGCDefault(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

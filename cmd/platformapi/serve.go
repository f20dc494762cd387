package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"platformapi/api"
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
	Addr           string
	Demo           bool
	Networks       []netip.Prefix // nil: loopback and private ranges
	AllowedOrigins []string       // MCP Origin allow-list
	GitLabURL      string         // code host; empty: the simulated one
	GitLabToken    string
	WebhookURL     string        // release pipeline; empty: the simulated one
	WebhookSecret  string        // signs webhook bodies (HMAC-SHA256)
	ProvisionDelay time.Duration // simulated provisioning time
	PipelineDelay  time.Duration // simulated pipeline run time
	JobTimeout     time.Duration // a job running longer is cancelled
	RescueAfter    time.Duration // a job running longer is presumed lost and retried
	GatewayURL     string        // AI gateway base URL, ending in /v1
	PrometheusURL  string        // monitoring of the AI nodes; empty: the simulated one
}

// pipeline picks the release pipeline: the webhook when configured, else
// the in-process simulated one, which reports back to the store.
func (m *Main) pipeline(o ServeOptions) resources.ReleasePipeline {
	if o.WebhookURL != "" {
		return webhook.New(o.WebhookURL, []byte(o.WebhookSecret), nil)
	}
	m.opts.Logger.Warn("no release pipeline configured (--pipeline-webhook-url): using the simulated pipeline")
	return pipelinesim.New(m.store, o.PipelineDelay, pipelinesim.WithLogger(m.opts.Logger))
}

// startWorker starts the background worker of long-running operations.
func (m *Main) startWorker(ctx context.Context, o ServeOptions) (*bunstore.Worker, error) {
	w, err := m.store.NewWorker(bunstore.WorkerConfig{Pipeline: m.pipeline(o), ProvisionDelay: o.ProvisionDelay,
		JobTimeout: o.JobTimeout, RescueAfter: o.RescueAfter, Logger: m.opts.Logger})
	if err != nil {
		return nil, err
	}
	return w, w.Start(context.WithoutCancel(ctx))
}

// codeHost picks the code host: GitLab when a URL is configured, else the
// in-process simulated one (demo and development).
func (m *Main) codeHost(o ServeOptions) resources.CodeHost {
	if o.GitLabURL != "" {
		return gitlab.New(o.GitLabURL, o.GitLabToken, nil)
	}
	m.opts.Logger.Warn("no GitLab configured (--gitlab-url): using the simulated code host")
	return codehostsim.New()
}

// sweepIdempotencyKeys deletes expired idempotency keys now and every
// interval until ctx ends.
func (m *Main) sweepIdempotencyKeys(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := m.store.DeleteExpired(ctx); err != nil && ctx.Err() == nil {
			m.opts.Logger.Error("deleting expired idempotency keys", "error", err)
		} else if n > 0 {
			m.opts.Logger.Info("deleted expired idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Handler builds the HTTP handler: the API under /api/v1 and MCP at /mcp.
func (m *Main) Handler(ctx context.Context, o ServeOptions) (http.Handler, error) {
	key, err := m.store.ServerKey(ctx, "cursor")
	if err != nil {
		return nil, err
	}
	srv := api.New(api.Config{Pepper: m.pepper, CursorKey: key, Networks: o.Networks, Logger: m.opts.Logger,
		GatewayBaseURL: o.GatewayURL},
		api.Services{Settings: m.store, Credentials: m.store, Tokens: m.store, Audit: m.store,
			Idempotency: m.store, Customers: m.store, Tenants: m.store, Users: m.store, CodeHost: m.codeHost(o),
			Operations: m.store, Projects: m.store, Releases: m.store, AIModels: m.store, AIGateway: m.store,
			AINodes: m.store, NodeCaches: m.store, Monitoring: m.monitor(o)})
	if _, err := tools.New(srv, tools.Config{AllowedOrigins: o.AllowedOrigins}); err != nil {
		return nil, err
	}
	return srv.Router(), nil
}

// Run migrates the database, optionally sets up the demo, starts the worker
// and the idempotency-key sweep, and serves HTTP on o.Addr until ctx ends.
func (m *Main) Run(ctx context.Context, o ServeOptions, out io.Writer) error {
	if _, err := bunstore.Migrate(ctx, m.db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if !m.pepper.Configured() {
		m.opts.Logger.Warn("no token pepper configured: every authenticated request answers 503 api_tokens_unconfigured")
	}
	if o.Demo {
		if err := m.setupDemo(ctx, out); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	h, err := m.Handler(ctx, o)
	if err != nil {
		return err
	}
	go m.sweepIdempotencyKeys(ctx, 10*time.Minute)
	worker, err := m.startWorker(ctx, o)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = worker.Stop(stop)
	}()
	return m.listen(ctx, o.Addr, h)
}

// listen serves h on addr until ctx ends, then drains requests for up to 10
// seconds.
func (m *Main) listen(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	base := "http://" + ln.Addr().String()
	m.opts.Logger.Info("serving", "addr", ln.Addr().String(), "api", base+api.Prefix, "mcp", base+"/mcp")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

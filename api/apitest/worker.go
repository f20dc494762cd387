package apitest

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/pipelinesim"
)

// runViews loads the server's views of live gateway keys and live tokens
// and keeps them current until the test ends (after the HTTP server
// closed: the gateway keys' last uses are written then).
func (e *Env) runViews() {
	if err := e.Server.LoadViews(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Server.RunViews(ctx) }()
	e.T.Cleanup(func() { cancel(); <-done })
}

// localFeed delivers the store's changes to the server in-process.
type localFeed struct{ srv *api.Server }

// Publish implements resources.ChangePublisher.
func (f localFeed) Publish(_ context.Context, c resources.Change) { f.srv.Changed(c) }

// startWorker runs the background worker with the simulated pipeline until
// the test ends; the Env keeps its configuration for StartWorker.
func (e *Env) startWorker(logger *slog.Logger, o Options) {
	e.Pipeline = pipelinesim.New(e.Store, 0, pipelinesim.WithLogger(logger))
	policy := o.AgentPolicy
	if policy == (bunstore.AgentPolicy{}) {
		policy = bunstore.AgentPolicy{Poll: 20 * time.Millisecond, Backoff: 10 * time.Millisecond, Attempts: 3}
	}
	e.workerConfig = bunstore.WorkerConfig{Pipeline: e.Pipeline, PollInterval: 20 * time.Millisecond,
		Logger: logger, Metrics: e.Metrics, Agents: e.Fleet, AgentPolicy: policy,
		ReconcileInterval: cmp.Or(o.ReconcileInterval, time.Hour)}
	e.Worker = e.StartWorker()
	e.T.Cleanup(e.Pipeline.Close) // runs first (cleanups run last first): closed, then the worker stops
}

// StartWorker starts a background worker with the Env's configuration
// (the same pipeline, agents and policy as e.Worker), for tests that stop a
// worker and need the next one; it stops when the test ends. A worker after
// the first reports its metrics to a registry of its own, as another
// replica's would.
func (e *Env) StartWorker() *bunstore.Worker {
	cfg := e.workerConfig
	if e.Worker != nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	w, err := e.Store.NewWorker(cfg)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.StopAndCancel(ctx)
	})
	return w
}

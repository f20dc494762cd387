package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// provisionArgs is the job that provisions a project.
type provisionArgs struct {
	OperationID int64 `json:"operation_id"`
}

// Kind names the job kind.
func (provisionArgs) Kind() string { return resources.OpKindProjectProvision }

// promotionArgs is the job that dispatches a release promotion.
type promotionArgs struct {
	ReleaseOperationID int64 `json:"release_operation_id"`
}

// Kind names the job kind.
func (promotionArgs) Kind() string { return resources.OpKindReleasePromotion }

// jobs lazily builds the insert-only River client the store enqueues with.
type jobs struct {
	once   sync.Once
	client *river.Client[*sql.Tx]
	err    error
}

// enqueue inserts a job inside the business transaction, so the job exists
// exactly when the change that needs it committed.
func (s *Store) enqueue(ctx context.Context, tx bun.Tx, args river.JobArgs) error {
	s.jobs.once.Do(func() {
		s.jobs.client, s.jobs.err = river.NewClient(riverdatabasesql.New(s.db.DB),
			&river.Config{Middleware: s.jobMiddleware()})
	})
	if s.jobs.err != nil {
		return s.jobs.err
	}
	_, err := s.jobs.client.InsertTx(ctx, tx.Tx, args, &river.InsertOpts{MaxAttempts: 25})
	return err
}

// WorkerConfig configures the background worker.
type WorkerConfig struct {
	Pipeline       resources.ReleasePipeline
	ProvisionDelay time.Duration // how long simulated provisioning takes
	JobTimeout     time.Duration // 0: 5 minutes
	RescueAfter    time.Duration // a job running this long is presumed lost (crash); 0: 10 minutes
	PollInterval   time.Duration // 0: 1 second
	Logger         *slog.Logger
	// Metrics, when set, receives the job counters and run-time histograms.
	Metrics prometheus.Registerer
	// Agents reaches the node agents that carry out node-cache copies and
	// removals and report what each node holds; required.
	Agents resources.NodeAgents
	// AgentPolicy says how the cache jobs poll and retry node agents.
	AgentPolicy AgentPolicy
	// ReconcileInterval is how often the node caches are compared with the
	// agents' reports (0: DefaultReconcileInterval; negative: never, for a
	// short-lived worker that only carries out a scripted story).
	ReconcileInterval time.Duration
}

// Worker runs the long-running operations (River over PostgreSQL): every
// job's effect and its completion commit in one transaction, so a restart
// loses no operation and a retried job never applies its effect twice.
type Worker struct {
	client  *river.Client[*sql.Tx]
	metrics *jobMetrics // nil: no metrics
	stopSub func()
}

// NewWorker builds the worker over the store's database.
func (s *Store) NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Agents == nil {
		return nil, errors.New("bunstore: NewWorker needs WorkerConfig.Agents (the node agents)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	timeout := cmpOr(cfg.JobTimeout, 5*time.Minute)
	if cfg.AgentPolicy.Watch == 0 { // an attempt lets go of a copy well before the job's timeout
		cfg.AgentPolicy.Watch = min(time.Minute, timeout/2)
	}
	client, err := river.NewClient(riverdatabasesql.New(s.db.DB), &river.Config{
		PeriodicJobs:         reconcileSchedule(cfg.ReconcileInterval),
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:              s.workers(cfg),
		JobTimeout:           timeout,
		RescueStuckJobsAfter: max(cmpOr(cfg.RescueAfter, 10*time.Minute), timeout),
		FetchPollInterval:    cmpOr(cfg.PollInterval, time.Second),
		FetchCooldown:        min(cmpOr(cfg.PollInterval, time.Second), 100*time.Millisecond),
		Logger:               slog.New(stopQuiet{cfg.Logger.Handler()}),
		Middleware:           s.jobMiddleware(),
		SoftStopTimeout:      softStopTimeout,
	})
	if err != nil {
		return nil, err
	}
	w := &Worker{client: client, stopSub: func() {}}
	if cfg.Metrics != nil {
		w.metrics = newJobMetrics(cfg.Metrics)
	}
	return w, nil
}

// softStopTimeout is how long stopping the worker lets running jobs go on
// before it cancels them. Every job commits its effect with its completion
// and a cancelled one is retried by the next worker, so nothing is lost;
// without it a job watching a node agent's copy (a minute an attempt) held
// every shutdown for as long as Stop allowed.
const softStopTimeout = 2 * time.Second

// workers are the job kinds the worker runs.
func (s *Store) workers(cfg WorkerConfig) *river.Workers {
	workers := river.NewWorkers()
	river.AddWorker(workers, &provisionWorker{store: s, delay: cfg.ProvisionDelay})
	river.AddWorker(workers, &promotionWorker{store: s, pipeline: cfg.Pipeline})
	river.AddWorker(workers, &cacheCopyWorker{store: s, agents: cfg.Agents, policy: cfg.AgentPolicy})
	river.AddWorker(workers, &cacheRemoveWorker{store: s, agents: cfg.Agents, policy: cfg.AgentPolicy})
	river.AddWorker(workers, &reconcileWorker{store: s, agents: cfg.Agents, logger: cfg.Logger})
	return workers
}

// reconcileSchedule runs the node cache reconcile every interval, and once
// as the worker starts; none for a negative interval.
func reconcileSchedule(interval time.Duration) []*river.PeriodicJob {
	if interval < 0 {
		return nil
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cmpOr(interval, DefaultReconcileInterval)),
		func() (river.JobArgs, *river.InsertOpts) {
			return reconcileArgs{}, &river.InsertOpts{MaxAttempts: 1}
		}, &river.PeriodicJobOpts{RunOnStart: true})}
}

// Start begins working jobs in the background until Stop.
func (w *Worker) Start(ctx context.Context) error {
	if w.metrics != nil {
		events, cancel := w.client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
			river.EventKindJobCancelled, river.EventKindJobSnoozed)
		w.stopSub = cancel
		go w.metrics.consume(events)
	}
	return w.client.Start(ctx)
}

// Stop lets running jobs go on for softStopTimeout, cancels the rest (they
// are retried later) and stops, bounded by ctx.
func (w *Worker) Stop(ctx context.Context) error {
	defer w.stopSub()
	return w.client.Stop(ctx)
}

// StopAndCancel cancels running jobs (they are retried later) and stops.
func (w *Worker) StopAndCancel(ctx context.Context) error {
	defer w.stopSub()
	return w.client.StopAndCancel(ctx)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// completeJob marks a job completed inside tx, with the effect it had.
func completeJob[T river.JobArgs](ctx context.Context, tx bun.Tx, job *river.Job[T]) error {
	_, err := river.JobCompleteTx[*riverdatabasesql.Driver](ctx, tx.Tx, job)
	return err
}

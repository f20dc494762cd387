// Package pipelinesim is an in-process simulated release pipeline
// implementing resources.ReleasePipeline, with fault injection for the
// failure paths the contract names. The demo world and the tests use it in
// place of a real pipeline: every accepted dispatch becomes a run that reports
// its outcome to a resources.DeployReporter after a delay.
package pipelinesim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"platformapi/resources"
)

// FailureReason is the Reason of every run that FailNext makes fail.
const FailureReason = "simulated pipeline failure"

// Defaults of the report retry; see WithRetry.
const (
	DefaultReportAttempts = 4
	DefaultReportBackoff  = 50 * time.Millisecond
)

// Run is one simulated pipeline run as Runs shows it.
type Run struct {
	ID       string // "sim-<n>", n counting from 1 per Sim
	Dispatch resources.PromotionDispatch
	Reported bool // the reporter accepted this run's report
}

// run is a Run with the outcome it was started with.
type run struct {
	Run
	fail bool
}

// report is the DeployReport r sends when it ends.
func (r *run) report() resources.DeployReport {
	d := r.Dispatch
	rep := resources.DeployReport{
		ReleaseOperationID: d.ReleaseOperationID,
		ProjectID:          d.ProjectID,
		Env:                d.TargetEnv,
		Component:          d.Component,
		Version:            d.Version,
		By:                 "pipeline:" + r.ID,
		Succeeded:          !r.fail,
	}
	if r.fail {
		rep.Reason = FailureReason
	}
	return rep
}

// Option configures a Sim.
type Option func(*Sim)

// WithLogger sets where a report that still fails after every retry is
// logged; the default is slog.Default(). A nil logger keeps the default.
func WithLogger(l *slog.Logger) Option {
	return func(s *Sim) {
		if l != nil {
			s.log = l
		}
	}
}

// WithRetry sets how often a run tries to report (attempts >= 1) and the
// wait before the first retry, doubled before each further one.
func WithRetry(attempts int, backoff time.Duration) Option {
	return func(s *Sim) {
		s.attempts = max(attempts, 1)
		s.backoff = max(backoff, 0)
	}
}

// Sim is a simulated release pipeline. It is safe for concurrent use, and
// every fault setting may be changed at any time, also while runs are going.
type Sim struct {
	reporter resources.DeployReporter
	log      *slog.Logger
	attempts int
	backoff  time.Duration
	stop     context.Context // done once Close was called; runs report under it
	cancel   context.CancelFunc

	mu          sync.Mutex
	idle        *sync.Cond // broadcast whenever pending drops to zero
	pending     int        // runs started and not yet ended
	closed      bool
	unavailable bool
	failNext    int
	delay       time.Duration
	runs        []*run
	byOp        map[int64]*run
}

// New returns an available simulated pipeline that reports every run to
// reporter (which must not be nil) delay after its dispatch.
func New(reporter resources.DeployReporter, delay time.Duration, opts ...Option) *Sim {
	stop, cancel := context.WithCancel(context.Background())
	s := &Sim{
		reporter: reporter, log: slog.Default(),
		attempts: DefaultReportAttempts, backoff: DefaultReportBackoff,
		stop: stop, cancel: cancel,
		delay: max(delay, 0), byOp: map[int64]*run{},
	}
	s.idle = sync.NewCond(&s.mu)
	for _, o := range opts {
		o(s)
	}
	return s
}

// SetUnavailable makes every following Dispatch fail with an error wrapping
// resources.ErrPipelineUnavailable and record nothing (true), or lifts that
// fault (false). Runs already started are not affected.
func (s *Sim) SetUnavailable(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable = on
}

// FailNext makes the next n runs started report Succeeded false with Reason
// FailureReason; n <= 0 cancels failures still pending.
func (s *Sim) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = max(n, 0)
}

// SetDelay sets how long each run started from now on waits before it reports.
func (s *Sim) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = max(d, 0)
}

// Runs returns every run started so far, in the order they were started.
func (s *Sim) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Run, len(s.runs))
	for i, r := range s.runs {
		out[i] = r.Run
	}
	return out
}

// Wait blocks until every run started so far has ended: it reported, gave up
// reporting after its retries, or was stopped by Close.
func (s *Sim) Wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pending > 0 {
		s.idle.Wait()
	}
}

// Close stops every pending run without reporting it, refuses further
// dispatches as unavailable, and returns once no run goroutine is left. It is
// safe to call more than once.
func (s *Sim) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.Wait()
}

// Dispatch starts a run for d and returns at once; the run reports its
// outcome after the delay. A release operation id already dispatched starts
// no second run and returns nil. While unavailable, after Close, or with ctx
// already done, it records nothing and returns an error wrapping
// resources.ErrPipelineUnavailable. A dispatch without a release operation id
// is refused with a plain error.
func (s *Sim) Dispatch(ctx context.Context, d resources.PromotionDispatch) error {
	if d.ReleaseOperationID <= 0 {
		return errors.New("pipelinesim: dispatch without a release operation id")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pipelinesim: %w: %w", resources.ErrPipelineUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("pipelinesim: closed: %w", resources.ErrPipelineUnavailable)
	case s.unavailable:
		return fmt.Errorf("pipelinesim: injected fault: %w", resources.ErrPipelineUnavailable)
	}
	if _, ok := s.byOp[d.ReleaseOperationID]; ok {
		return nil
	}
	r := &run{Run: Run{ID: fmt.Sprintf("sim-%d", len(s.runs)+1), Dispatch: d}, fail: s.failNext > 0}
	if r.fail {
		s.failNext--
	}
	s.runs = append(s.runs, r)
	s.byOp[d.ReleaseOperationID] = r
	s.pending++
	go s.execute(r, s.delay)
	return nil
}

// execute is one run's goroutine: it waits delay, then reports, retrying a
// failed report with a doubling backoff; Close ends it at any point.
func (s *Sim) execute(r *run, delay time.Duration) {
	defer s.end()
	if !sleep(s.stop, delay) {
		return
	}
	rep := r.report()
	backoff := s.backoff
	for attempt := 1; ; attempt++ {
		err := s.reporter.ReportDeploy(s.stop, rep)
		if err == nil {
			s.markReported(r)
			return
		}
		if s.stop.Err() != nil {
			return
		}
		if attempt >= s.attempts {
			s.log.Error("pipelinesim: report failed; giving up",
				"run", r.ID, "release_operation_id", rep.ReleaseOperationID,
				"attempts", attempt, "error", err)
			return
		}
		if !sleep(s.stop, backoff) {
			return
		}
		backoff *= 2
	}
}

// markReported records that r's report was accepted.
func (s *Sim) markReported(r *run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Reported = true
}

// end counts a run as ended and wakes Wait when none is left.
func (s *Sim) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending--
	if s.pending == 0 {
		s.idle.Broadcast()
	}
}

// sleep waits d and reports true, or reports false as soon as ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

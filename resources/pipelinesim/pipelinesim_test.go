package pipelinesim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// recorder is a DeployReporter that keeps every report it accepts and can be
// told to refuse the first failFirst calls, or every call.
type recorder struct {
	mu        sync.Mutex
	reports   []resources.DeployReport
	at        []time.Time
	calls     int
	failFirst int
	failAll   bool
	block     bool // wait for ctx to end, then fail with its error
}

func (r *recorder) ReportDeploy(ctx context.Context, rep resources.DeployReport) error {
	r.mu.Lock()
	r.calls++
	fail := r.failAll || r.calls <= r.failFirst
	block := r.block
	r.mu.Unlock()
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	if fail {
		return errors.New("store down")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
	r.at = append(r.at, time.Now())
	return nil
}

func (r *recorder) got() []resources.DeployReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]resources.DeployReport(nil), r.reports...)
}

func (r *recorder) callCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func dispatch(id int64) resources.PromotionDispatch {
	return resources.PromotionDispatch{
		ReleaseOperationID: id, ProjectID: 7, ProjectShortName: "SHOP",
		Component: "app-api", SourceEnv: "dev", TargetEnv: "uat",
		Version: "1.4.2", RequestedBy: "user:alice@example.com",
	}
}

// newSim returns a Sim with fast retries that is closed when the test ends.
func newSim(t *testing.T, rep resources.DeployReporter, delay time.Duration, opts ...Option) *Sim {
	t.Helper()
	opts = append([]Option{WithRetry(3, time.Millisecond)}, opts...)
	s := New(rep, delay, opts...)
	t.Cleanup(s.Close)
	return s
}

func TestSim_IsAReleasePipeline(t *testing.T) {
	var _ resources.ReleasePipeline = New(&recorder{}, 0)
}

func TestSim_ReportsSuccessAfterDelayWithTheDispatchFields(t *testing.T) {
	rec := &recorder{}
	const delay = 40 * time.Millisecond
	s := newSim(t, rec, delay)
	start := time.Now()
	if err := s.Dispatch(context.Background(), dispatch(11)); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	if el := time.Since(start); el >= delay {
		t.Fatalf("Dispatch took %v; want it to return before the delay", el)
	}
	if n := len(rec.got()); n != 0 {
		t.Fatalf("%d reports right after Dispatch; want none before the delay", n)
	}
	s.Wait()
	got := rec.got()
	want := resources.DeployReport{
		ReleaseOperationID: 11, ProjectID: 7, Env: "uat", Component: "app-api",
		Version: "1.4.2", By: "pipeline:sim-1", Succeeded: true,
	}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("reports = %+v; want [%+v]", got, want)
	}
	if el := rec.at[0].Sub(start); el < delay {
		t.Fatalf("reported after %v; want at least the delay %v", el, delay)
	}
	runs := s.Runs()
	if len(runs) != 1 || runs[0].ID != "sim-1" || runs[0].Dispatch != dispatch(11) || !runs[0].Reported {
		t.Fatalf("Runs() = %+v; want one reported run sim-1 of dispatch 11", runs)
	}
}

func TestSim_RunIDsCountUpPerDispatchedOperation(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, 0)
	for id := int64(1); id <= 3; id++ {
		if err := s.Dispatch(context.Background(), dispatch(id*10)); err != nil {
			t.Fatal(err)
		}
	}
	s.Wait()
	for i, r := range s.Runs() {
		want := fmt.Sprintf("sim-%d", i+1)
		if r.ID != want || r.Dispatch.ReleaseOperationID != int64(i+1)*10 {
			t.Fatalf("run %d = %+v; want id %s for operation %d", i, r, want, (i+1)*10)
		}
	}
	if n := len(rec.got()); n != 3 {
		t.Fatalf("%d reports; want 3", n)
	}
}

func TestSim_SecondDispatchOfSameOperationStartsNoRun(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, 10*time.Millisecond)
	ctx := context.Background()
	if err := s.Dispatch(ctx, dispatch(5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Dispatch(ctx, dispatch(5)); err != nil {
		t.Fatalf("second Dispatch while running = %v; want nil", err)
	}
	s.Wait()
	if err := s.Dispatch(ctx, dispatch(5)); err != nil {
		t.Fatalf("Dispatch after the report = %v; want nil", err)
	}
	s.Wait()
	if n, m := len(s.Runs()), len(rec.got()); n != 1 || m != 1 {
		t.Fatalf("runs = %d, reports = %d; want 1, 1", n, m)
	}
}

func TestSim_FailNext_ReportsFailureForExactlyNRuns(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, 0)
	s.FailNext(2)
	for id := int64(1); id <= 3; id++ {
		if err := s.Dispatch(context.Background(), dispatch(id)); err != nil {
			t.Fatal(err)
		}
		s.Wait()
	}
	got := rec.got()
	if len(got) != 3 {
		t.Fatalf("%d reports; want 3", len(got))
	}
	for i, rep := range got[:2] {
		if rep.Succeeded || rep.Reason != "simulated pipeline failure" || rep.ReleaseOperationID != int64(i+1) {
			t.Fatalf("report %d = %+v; want a simulated failure", i+1, rep)
		}
	}
	if !got[2].Succeeded || got[2].Reason != "" {
		t.Fatalf("third report = %+v; want success without reason", got[2])
	}
}

func TestSim_FailNextZero_CancelsPendingFailures(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, 0)
	s.FailNext(3)
	s.FailNext(0)
	if err := s.Dispatch(context.Background(), dispatch(1)); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	if got := rec.got(); len(got) != 1 || !got[0].Succeeded {
		t.Fatalf("reports = %+v; want one success", got)
	}
}

func TestSim_Unavailable_RefusesRetryablyAndRecordsNothing(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, 0)
	s.SetUnavailable(true)
	err := s.Dispatch(context.Background(), dispatch(1))
	if !errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("Dispatch err = %v; want ErrPipelineUnavailable", err)
	}
	s.Wait()
	if len(s.Runs()) != 0 || len(rec.got()) != 0 {
		t.Fatal("an unavailable pipeline recorded a run")
	}
	s.SetUnavailable(false)
	if err := s.Dispatch(context.Background(), dispatch(1)); err != nil {
		t.Fatalf("retry after lifting the fault = %v; want nil", err)
	}
	s.Wait()
	if len(s.Runs()) != 1 || len(rec.got()) != 1 {
		t.Fatal("the retried dispatch did not run")
	}
}

func TestSim_DoneContext_RefusesRetryably(t *testing.T) {
	s := newSim(t, &recorder{}, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Dispatch(ctx, dispatch(1))
	if !errors.Is(err, resources.ErrPipelineUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want ErrPipelineUnavailable wrapping Canceled", err)
	}
	if len(s.Runs()) != 0 {
		t.Fatal("a cancelled dispatch recorded a run")
	}
}

func TestSim_DispatchWithoutOperationID_RefusedNotRetryable(t *testing.T) {
	s := newSim(t, &recorder{}, 0)
	err := s.Dispatch(context.Background(), dispatch(0))
	if err == nil || errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("err = %v; want a plain error", err)
	}
}

func TestSim_SetDelay_AppliesToLaterRuns(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, time.Hour)
	s.SetDelay(0)
	if err := s.Dispatch(context.Background(), dispatch(1)); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	if len(rec.got()) != 1 {
		t.Fatal("the run did not report with the shortened delay")
	}
}

func TestSim_Close_StopsPendingRunsWithoutReport(t *testing.T) {
	rec := &recorder{}
	s := New(rec, time.Hour)
	if err := s.Dispatch(context.Background(), dispatch(1)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Close()
	s.Close()
	s.Wait()
	if el := time.Since(start); el > time.Second {
		t.Fatalf("Close took %v; want pending runs stopped at once", el)
	}
	if rec.callCount() != 0 || s.Runs()[0].Reported {
		t.Fatal("a closed pipeline reported a pending run")
	}
	if err := s.Dispatch(context.Background(), dispatch(2)); !errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("Dispatch after Close = %v; want ErrPipelineUnavailable", err)
	}
}

func TestSim_Close_CancelsAReportInFlight(t *testing.T) {
	rec := &recorder{block: true}
	s := New(rec, 0)
	if err := s.Dispatch(context.Background(), dispatch(1)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 0, "the report in flight", func() bool { return rec.callCount() > 0 })
	s.Close() // returns only once the blocked report saw its context end
	if s.Runs()[0].Reported {
		t.Fatal("a cancelled report was counted as reported")
	}
}

func TestSim_ReportError_RetriedUntilAccepted(t *testing.T) {
	rec := &recorder{failFirst: 2}
	s := newSim(t, rec, 0)
	if err := s.Dispatch(context.Background(), dispatch(1)); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	if rec.callCount() != 3 || len(rec.got()) != 1 || !s.Runs()[0].Reported {
		t.Fatalf("calls = %d, reports = %d; want the third attempt accepted", rec.callCount(), len(rec.got()))
	}
}

func TestSim_ReportError_GivesUpAfterRetriesAndLogs(t *testing.T) {
	rec := &recorder{failAll: true}
	var buf testkit.LockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s := newSim(t, rec, 0, WithLogger(log))
	if err := s.Dispatch(context.Background(), dispatch(9)); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	if rec.callCount() != 3 || s.Runs()[0].Reported {
		t.Fatalf("calls = %d, reported = %v; want 3 attempts, not reported", rec.callCount(), s.Runs()[0].Reported)
	}
	out := buf.String()
	for _, want := range []string{"level=ERROR", "run=sim-1", "release_operation_id=9", "store down"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log %q lacks %q", out, want)
		}
	}
}

func TestSim_ConcurrentDispatches_OneRunPerOperationNoRace(t *testing.T) {
	rec := &recorder{}
	s := newSim(t, rec, time.Millisecond)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			if err := s.Dispatch(context.Background(), dispatch(int64(i%16)+1)); err != nil {
				t.Error(err)
			}
			s.FailNext(0)
			s.SetDelay(time.Millisecond)
			_ = s.Runs()
		})
	}
	wg.Go(s.Wait)
	wg.Wait()
	s.Wait()
	seen := map[int64]bool{}
	for _, rep := range rec.got() {
		if seen[rep.ReleaseOperationID] {
			t.Fatalf("operation %d reported twice", rep.ReleaseOperationID)
		}
		seen[rep.ReleaseOperationID] = true
	}
	if len(s.Runs()) != 16 || len(seen) != 16 {
		t.Fatalf("runs = %d, reported operations = %d; want 16, 16", len(s.Runs()), len(seen))
	}
}

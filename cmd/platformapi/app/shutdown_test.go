package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// shutdownRun is one request served while the server is told to stop.
type shutdownRun struct {
	status   int           // the answer's status; 0: no answer
	answered time.Duration // when the answer arrived, from the request's start
	serveErr error         // what serve returned
	returned time.Duration // when serve returned, from the request's start
}

// serveAndStop serves a handler that works for `work` (ignoring its
// context, as a slow outside call might) with the serve options o, stops
// the server (SIGTERM's context ends) once the request is in its handler
// and reports what the client and serve saw.
func serveAndStop(t *testing.T, o ServeOptions, work time.Duration) shutdownRun {
	t.Helper()
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		time.Sleep(work)
		_, _ = io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{opts: Options{Logger: slog.New(slog.DiscardHandler)}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- m.serve(ctx, ln, h, nil, o) }()
	var run shutdownRun
	begin := time.Now()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			run.status = resp.StatusCode
		}
		run.answered = time.Since(begin)
	}()
	<-started
	stop()
	run.serveErr = <-served
	run.returned = time.Since(begin)
	<-answered
	return run
}

// TestServe_Stop_RequestWithinRequestTimeout_AnsweredBeforeExit: a stop
// (SIGTERM, Ctrl-C) lets every request in flight finish as long as it may
// run, --request-timeout, not a fixed 10 s: the unit's TimeoutStopSec and
// the chart's terminationGracePeriodSeconds leave room for it. serve
// returns (and the process exits) only after the answer was written, and
// returns no error.
func TestServe_Stop_RequestWithinRequestTimeout_AnsweredBeforeExit(t *testing.T) {
	t.Parallel()
	const work = 10500 * time.Millisecond // past the former fixed 10 s drain
	run := serveAndStop(t, ServeOptions{RequestTimeout: 12 * time.Second}, work)
	if run.status != http.StatusOK {
		t.Fatalf("the request in flight got status %d (0: no answer), want 200", run.status)
	}
	if run.serveErr != nil {
		t.Fatalf("serve returned %v after a stop, want nil", run.serveErr)
	}
	if run.returned < run.answered {
		t.Fatalf("serve returned %v into the request, before its answer (%v)", run.returned, run.answered)
	}
}

// TestServe_Stop_RequestPastItsTimeout_CutAndCleanExit: a handler still
// running when the drain (--request-timeout and a margin) ends is cut, and
// serve returns no error: the stop was asked for.
func TestServe_Stop_RequestPastItsTimeout_CutAndCleanExit(t *testing.T) {
	t.Parallel()
	run := serveAndStop(t, ServeOptions{RequestTimeout: time.Second}, 8*time.Second)
	if run.status != 0 {
		t.Fatalf("status %d, want the request cut (no answer)", run.status)
	}
	if run.serveErr != nil {
		t.Fatalf("serve returned %v after a stop, want nil", run.serveErr)
	}
	if want := time.Second + drainMargin + time.Second; run.returned > want {
		t.Fatalf("serve returned %v into the request, want within %v", run.returned, want)
	}
}

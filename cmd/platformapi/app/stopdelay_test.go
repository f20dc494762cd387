package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore/pgtest"
	"platformapi/resources/testkit"
)

// fresh asks addr for path on a connection of its own (no keep-alive): a
// client the endpoints still send to after the stop. 0: no answer.
func fresh(addr, path string) (int, map[string]any) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	res, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

// serveWithStopDelay starts `serve --stop-delay delay` in-process on a
// test database and waits until it is ready; cancelling the returned
// context is SIGTERM, and the channel gets what serve returned.
func serveWithStopDelay(t *testing.T, delay time.Duration) (addr string, stop context.CancelFunc,
	done <-chan error) {
	t.Helper()
	addr, dsn := freeAddr(t), pgtest.DSN(t)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	served := make(chan error, 1)
	go func() {
		root := NewRootCommand(io.Discard, io.Discard)
		root.SetArgs([]string{"serve", "--database-url", dsn, "--addr", addr, "--log-level", "error",
			"--stop-delay", delay.String()})
		served <- root.ExecuteContext(ctx)
	}()
	testkit.Eventually(t, 30*time.Second, "the server is ready", func() bool {
		select {
		case err := <-served:
			t.Fatalf("serve returned before the stop: %v", err)
		default:
		}
		status, _ := fresh(addr, "/readyz")
		return status == http.StatusOK
	})
	return addr, stop, served
}

// TestServe_StopDelay_NotReadyButServingThenDrains: with --stop-delay a
// stop (SIGTERM) turns /readyz to 503 "stopping" at once, so the endpoints
// drop the pod, while /healthz stays 200 and a request on a new connection
// (kube-proxy has not heard yet) is still answered; serve returns once the
// delay is over, cleanly, and then no connection is accepted.
func TestServe_StopDelay_NotReadyButServingThenDrains(t *testing.T) {
	const delay = 3 * time.Second
	addr, stop, done := serveWithStopDelay(t, delay)
	stopped := time.Now()
	stop()
	var body map[string]any
	testkit.Eventually(t, delay, "/readyz answers 503 once stopping", func() bool {
		var status int
		status, body = fresh(addr, "/readyz")
		return status == http.StatusServiceUnavailable
	})
	if d := cmp.Diff(map[string]any{"status": "stopping"}, body); d != "" {
		t.Errorf("/readyz while stopping (-want +got):\n%s", d)
	}
	if status, _ := fresh(addr, "/healthz"); status != http.StatusOK {
		t.Errorf("/healthz on a new connection during the delay: %d, want 200", status)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after a stop, want nil", err)
		}
	case <-time.After(delay + drainTimeout(ServeOptions{}) + 10*time.Second):
		t.Fatal("serve did not return after the delay and the drain")
	}
	if took := time.Since(stopped); took < delay {
		t.Errorf("serve returned %v after the stop, before the delay of %v", took, delay)
	}
	if status, _ := fresh(addr, "/healthz"); status != 0 {
		t.Errorf("a connection after serve returned got %d, want refused", status)
	}
}

// fakeSignals stands for the process's stop signals: called tells when
// serve listens for them, send delivers one.
type fakeSignals struct {
	called chan struct{}
	c      chan os.Signal
}

func newFakeSignals() *fakeSignals {
	return &fakeSignals{called: make(chan struct{}, 1), c: make(chan os.Signal, 1)}
}

func (f *fakeSignals) notify() (<-chan os.Signal, func()) {
	f.called <- struct{}{}
	return f.c, func() {}
}

// TestStopLater_SecondSignal_EndsTheDelayAtOnce: a second SIGTERM or
// Ctrl-C during --stop-delay skips the rest of it: the serving context
// ends at once, not after the hour.
func TestStopLater_SecondSignal_EndsTheDelayAtOnce(t *testing.T) {
	t.Parallel()
	m := &Main{opts: Options{Logger: slog.New(slog.DiscardHandler)}}
	sig := newFakeSignals()
	parent, first := context.WithCancel(context.Background())
	ctx, cancel := m.stopLater(parent, time.Hour, sig.notify)
	defer cancel()
	first()
	<-sig.called // listening for the second only after the first
	if !isClosed(m.stopping) || ctx.Err() != nil {
		t.Fatalf("after the first signal: stopping %v, serving context %v; want stopping, "+
			"still serving", isClosed(m.stopping), ctx.Err())
	}
	sig.c <- syscall.SIGTERM
	testkit.Eventually(t, 0, "the second signal ends the serving context", func() bool {
		return ctx.Err() != nil
	})
}

// TestStopLater_NoDelay_StopsWithTheSignal: without --stop-delay (systemd,
// a plain process) the serving context ends with the signal, as before,
// and /readyz is never told the server is stopping.
func TestStopLater_NoDelay_StopsWithTheSignal(t *testing.T) {
	t.Parallel()
	m := &Main{opts: Options{Logger: slog.New(slog.DiscardHandler)}}
	parent, first := context.WithCancel(context.Background())
	ctx, cancel := m.stopLater(parent, 0, func() (<-chan os.Signal, func()) {
		t.Error("listened for a second signal without a delay")
		return nil, func() {}
	})
	defer cancel()
	first()
	<-ctx.Done()
	if m.stopping != nil {
		t.Error("a stopping channel without a delay")
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Package fault is the fault injection the simulated outside systems share:
// unreachable, the next n calls failing, and a delay that honours the
// caller's context, plus a call counter.
package fault

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Injector holds the faults of one simulated system. Its zero value injects
// nothing; it is safe for concurrent use and may change at any time.
type Injector struct {
	mu          sync.Mutex
	unreachable bool
	failNext    int
	delay       time.Duration
	calls       int
}

// SetUnreachable makes every following call fail (true) or lifts that fault.
func (f *Injector) SetUnreachable(on bool) { f.mu.Lock(); f.unreachable = on; f.mu.Unlock() }

// FailNext makes the next n calls fail; n <= 0 cancels failures still pending.
func (f *Injector) FailNext(n int) { f.mu.Lock(); f.failNext = max(n, 0); f.mu.Unlock() }

// SetDelay makes each following call wait d before answering.
func (f *Injector) SetDelay(d time.Duration) { f.mu.Lock(); f.delay = max(d, 0); f.mu.Unlock() }

// Calls is how many calls were made, failed ones included.
func (f *Injector) Calls() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

// Enter counts a call, consumes an injected failure and waits the delay. It
// returns an error wrapping sentinel when the call must fail: the context's
// error when ctx ended during the delay, else the injected fault.
func (f *Injector) Enter(ctx context.Context, system string, sentinel error) error {
	f.mu.Lock()
	f.calls++
	fail := f.unreachable || f.failNext > 0
	if f.failNext > 0 {
		f.failNext--
	}
	delay := f.delay
	f.mu.Unlock()
	if err := Sleep(ctx, delay); err != nil {
		return fmt.Errorf("%s: %w: %w", system, sentinel, err)
	}
	if fail {
		return fmt.Errorf("%s: injected fault: %w", system, sentinel)
	}
	return nil
}

// Sleep waits d, or returns ctx's error as soon as ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

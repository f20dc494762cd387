package testkit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// recordingTB notes a Fatalf instead of stopping the goroutine.
type recordingTB struct {
	testing.TB
	failed atomic.Bool
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Fatalf(string, ...any)     { r.failed.Store(true) }
func (r *recordingTB) Errorf(f string, a ...any) { r.Fatalf(f, a...) }

func TestEventually_WaitsForTheConditionAndFailsPastTheDeadline(t *testing.T) {
	var n atomic.Int32
	Eventually(t, 0, "the third look", func() bool { return n.Add(1) >= 3 })
	if n.Load() != 3 {
		t.Fatalf("looked %d times", n.Load())
	}
	r := &recordingTB{TB: t}
	Eventually(r, 20e6, "never", func() bool { return false })
	if !r.failed.Load() {
		t.Fatal("a condition that never holds did not fail the test")
	}
}

func TestLockedBuffer_ConcurrentWritersNothingLost(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { fmt.Fprintf(&b, "%02d\n", i) })
	}
	wg.Wait()
	if got := len(b.String()); got != 150 {
		t.Fatalf("%d bytes, want 150", got)
	}
	b.Reset()
	if b.String() != "" {
		t.Fatal("Reset kept bytes")
	}
}

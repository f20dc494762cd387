// Package testkit is the one kit of test helpers every package's tests
// share: waiting for a condition without fixed sleeps, and a buffer that
// concurrent loggers may write. It depends on the standard library only, so
// any test may import it (api/apitest builds the HTTP helpers on it).
package testkit

import (
	"bytes"
	"os"
	"sync"
	"testing"
	"time"
)

// DefaultWait is how long Eventually waits when given no deadline.
const DefaultWait = 10 * time.Second

// Eventually polls cond until it holds, first every 5 ms and then less
// often (at most every 50 ms), and fails the test naming what did not
// happen within (0: DefaultWait).
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if within <= 0 {
		within = DefaultWait
	}
	deadline, pause := time.Now().Add(within), 5*time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
			return // for a testing.TB whose Fatalf returns
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}

// LockedBuffer is a bytes.Buffer that concurrent writers (a logger, a
// server's goroutines) may write while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Reset forgets what was written.
func (b *LockedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

// ChangeByte changes one byte of the file name in place (its size stays)
// and moves its modification time a second on, as a later write would:
// what a damaged copy looks like to a check by size and time.
func ChangeByte(t testing.TB, name string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(name, time.Time{}, fi.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
}

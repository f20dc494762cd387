package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleepUntil returns at the moment at (at once when it has passed). It
// sleeps in nanosleep(2) on the goroutine's thread, not on Go's timers:
// those wake a sleeper late by up to a millisecond on Linux (half a
// millisecond at the median on the bench machine), which a paced load would
// count as the server's latency; nanosleep wakes within about 0.1 ms
// (docs/benchmarks.md, "Paced loads with a precise clock").
func sleepUntil(at time.Time) {
	d := time.Until(at)
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR { // interrupted: ts holds what is left
	}
}

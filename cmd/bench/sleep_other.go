//go:build !linux

package main

import "time"

// sleepUntil returns at the moment at (at once when it has passed), on Go's
// timers (see sleep_linux.go for why Linux sleeps otherwise).
func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

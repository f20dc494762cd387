package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"platformapi/bunstore"
)

// holdDemoClock stands every clock still (the store's, the API's and the
// database's) for building the demo history, and sets the instant the
// history leads up to: --frozen-clock's, else the real clock's now, for
// which the database's clock is frozen during the build only. demoAt then
// moves the clocks to each step's instant, so nothing of the history is
// written "now" by accident. release gives the clocks back: a frozen clock
// returns to its instant; one frozen for the build is removed (the
// database's trigger too) and the real clock runs again.
func (m *Main) holdDemoClock(ctx context.Context) (release func(context.Context) error, err error) {
	if c := m.clock.Load(); c != nil {
		m.demoBase = c.Now()
		return func(ctx context.Context) error { return m.demoAt(ctx, 0) }, nil
	}
	// Whole seconds, as token expiries are: a token minted 30 days back for
	// 33 days expires exactly 3 days after the instant.
	c, err := bunstore.FreezeClock(ctx, m.db, time.Now().Truncate(time.Second))
	if err != nil {
		return nil, fmt.Errorf("holding the clock for the demo history: %w", err)
	}
	m.demoBase = c.Now()
	m.clock.Store(c)
	return func(ctx context.Context) error {
		err := bunstore.ThawClock(ctx, m.db) // the database first, then the Go side
		m.clock.Store(nil)
		return err
	}, nil
}

// demoAt moves every clock to the instant before earlier than the one the
// demo history leads up to (see holdDemoClock).
func (m *Main) demoAt(ctx context.Context, before time.Duration) error {
	c := m.clock.Load()
	if c == nil {
		return errors.New("demo history: the clock is not held")
	}
	return c.Set(ctx, m.demoBase.Add(-before))
}

// inDemoPast runs build with the clocks held (holdDemoClock) and gives them
// back afterwards, also when build fails.
func (m *Main) inDemoPast(ctx context.Context, build func(context.Context) error) error {
	release, err := m.holdDemoClock(ctx)
	if err != nil {
		return err
	}
	err = build(ctx)
	return errors.Join(err, release(context.WithoutCancel(ctx)))
}

package api

import (
	"context"
	"log/slog"
	"time"
)

// reloads paces the whole reloads of a replica's in-memory view of the
// database (live gateway keys, live tokens): every re-check interval, and
// soon after ask (a resync, a failed read of one row); a failed reload is
// tried again after gatewayReloadRetry, the view answering from what it
// held.
type reloads struct {
	recheck time.Duration
	asked   chan struct{}
}

func newReloads(recheck time.Duration) reloads {
	return reloads{recheck: recheck, asked: make(chan struct{}, 1)}
}

// ask makes the view reload soon; asks made before it did are one.
func (r reloads) ask() {
	select {
	case r.asked <- struct{}{}:
	default:
	}
}

// reload runs load; a failure (not ctx's end) is logged with msg and
// asked again after gatewayReloadRetry.
func (r reloads) reload(ctx context.Context, load func(context.Context) error, logger *slog.Logger,
	msg string) {
	if err := load(ctx); err != nil && ctx.Err() == nil {
		logger.Warn(msg, "error", err)
		time.AfterFunc(gatewayReloadRetry, r.ask)
	}
}

package bunstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// ChangeChannel is the PostgreSQL NOTIFY channel of the change feed.
const ChangeChannel = "platformapi_changes"

// Timing of the feed: a publish or a connection attempt may take feedOpTimeout;
// a silent listening connection is pinged every feedPingEvery; a lost one is
// retried every feedRetryEvery.
const (
	feedOpTimeout  = 2 * time.Second
	feedPingEvery  = 5 * time.Second
	feedRetryEvery = 500 * time.Millisecond
)

// ChangeFeed is the change feed of an installation without Redis, on
// PostgreSQL's LISTEN/NOTIFY: the store publishes a committed change with
// pg_notify, and every replica (and this process at once) drops the cached
// credentials it touches. While the listening connection is down a replica
// trusts cached credentials only for the re-check interval; it says so once
// in its log and metrics, and reconnects by itself, flushing its cache.
// It is a resources.ChangePublisher; Run keeps the listening connection.
type ChangeFeed struct {
	db        *bun.DB
	cfg       *pgx.ConnConfig
	logger    *slog.Logger
	mu        sync.Mutex
	sink      resources.ChangeSink
	listening atomic.Int32 // feedUnknown, feedUp or feedDown
	fallback  prometheus.Gauge
	published *prometheus.CounterVec
}

// States of the listening connection; unknown until the first attempt.
const (
	feedUnknown int32 = iota
	feedUp
	feedDown
)

// NewChangeFeed builds the feed of the database db was opened on (dsn); it
// connects only in Run. A nil logger means slog.Default().
func NewChangeFeed(dsn string, db *bun.DB, logger *slog.Logger) (*ChangeFeed, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("bunstore: change feed: parse database DSN: %w", err)
	}
	cfg.ConnectTimeout = feedOpTimeout
	cfg.RuntimeParams["application_name"] = "platformapi change feed"
	if logger == nil {
		logger = slog.Default()
	}
	f := &ChangeFeed{db: db, cfg: cfg, logger: logger}
	f.fallback = prometheus.NewGauge(prometheus.GaugeOpts{Name: "platformapi_change_feed_fallback",
		Help: "1 while the change feed (PostgreSQL LISTEN) is down: credentials re-checked by interval."})
	f.published = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platformapi_change_feed_published_total",
		Help: "Changes published to the feed, by kind and result."}, []string{"kind", "result"})
	f.fallback.Set(1) // until the first LISTEN succeeds
	return f, nil
}

// Register adds the feed's metrics to reg; nil registers nothing.
func (f *ChangeFeed) Register(reg prometheus.Registerer) {
	if reg != nil {
		reg.MustRegister(f.fallback, f.published)
	}
}

// Listening reports whether the feed's LISTEN connection is up.
func (f *ChangeFeed) Listening() bool { return f.listening.Load() == feedUp }

// Publish implements resources.ChangePublisher: the change is applied to
// this process's sink at once, then notified to every replica. A failed
// notification is logged; other replicas then see the change within their
// re-check interval.
func (f *ChangeFeed) Publish(ctx context.Context, c resources.Change) {
	if sink := f.currentSink(); sink != nil {
		sink.Changed(c)
	}
	ctx, cancel := context.WithTimeout(ctx, feedOpTimeout)
	defer cancel()
	if _, err := f.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", ChangeChannel, c.Encode()); err != nil {
		f.published.WithLabelValues(c.Kind, "failed").Inc()
		f.logger.Warn("publishing a change to the change feed failed: "+
			"other replicas apply it within their re-check interval", "change", c.Kind, "error", err)
		return
	}
	f.published.WithLabelValues(c.Kind, "sent").Inc()
}

// Run listens until ctx ends, applying each change to sink. Each new LISTEN
// first resyncs the sink (changes may have been missed while it was down);
// a lost connection is retried every feedRetryEvery.
func (f *ChangeFeed) Run(ctx context.Context, sink resources.ChangeSink) {
	f.mu.Lock()
	f.sink = sink
	f.mu.Unlock()
	for ctx.Err() == nil {
		err := f.listen(ctx, sink)
		if ctx.Err() != nil {
			return
		}
		f.setListening(false, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(feedRetryEvery):
		}
	}
}

// listen holds one LISTEN connection until it breaks, returning why.
func (f *ChangeFeed) listen(ctx context.Context, sink resources.ChangeSink) error {
	conn, err := pgx.ConnectConfig(ctx, f.cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), feedOpTimeout)
		_ = conn.Close(cctx)
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+ChangeChannel); err != nil {
		return err
	}
	sink.Resync()
	f.setListening(true, nil)
	for {
		wctx, cancel := context.WithTimeout(ctx, feedPingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if err := f.ping(ctx, conn); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			f.apply(n.Payload, sink)
		}
	}
}

// ping checks that a silent connection still answers.
func (f *ChangeFeed) ping(ctx context.Context, conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, feedOpTimeout)
	defer cancel()
	return conn.Ping(ctx)
}

// apply hands one notification to sink; a malformed one resyncs.
func (f *ChangeFeed) apply(payload string, sink resources.ChangeSink) {
	c, err := resources.ParseChange(payload)
	if err != nil {
		f.logger.Warn("ignoring a malformed change-feed notification; resyncing", "error", err)
		sink.Resync()
		return
	}
	sink.Changed(c)
}

func (f *ChangeFeed) currentSink() resources.ChangeSink {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sink
}

// setListening records a transition, logging it once.
func (f *ChangeFeed) setListening(up bool, cause error) {
	next := map[bool]int32{true: feedUp, false: feedDown}[up]
	if f.listening.Swap(next) == next {
		return
	}
	if up {
		f.fallback.Set(0)
		f.logger.Info("change feed (PostgreSQL) listening: revocations apply at once; cached credentials flushed")
		return
	}
	f.fallback.Set(1)
	msg := "change feed (PostgreSQL) lost: credentials are re-checked against PostgreSQL by interval until it returns"
	if cause != nil {
		f.logger.Warn(msg, "error", cause.Error())
		return
	}
	f.logger.Warn(msg)
}

package sharedcache

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"platformapi/resources"
)

// errSilent and errKicked end a subscription: no answer to pings, or a
// command to Redis failed elsewhere.
var (
	errSilent = errors.New("sharedcache: the subscription stopped answering pings")
	errKicked = errors.New("sharedcache: a command to Redis failed")
)

// Run keeps the change feed's subscription until ctx ends, applying each
// change to sink. Each (re)confirmed subscription first resyncs the sink
// (events may have been missed while it was down) and only then counts as
// healthy; a broken one falls back at once and is retried every retryEvery.
func (s *Shared) Run(ctx context.Context, sink resources.ChangeSink) {
	s.mu.Lock()
	s.sink = sink
	s.mu.Unlock()
	for ctx.Err() == nil {
		err := s.subscribe(ctx, sink)
		if ctx.Err() != nil {
			return
		}
		s.setHealthy(false, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryEvery):
		}
	}
}

// subscribe holds one subscription until it breaks, returning why.
func (s *Shared) subscribe(ctx context.Context, sink resources.ChangeSink) error {
	channel, err := s.name(ctx, "changes")
	if err != nil {
		return err
	}
	ps := s.client.Subscribe(ctx)
	defer ps.Close()
	if err := ps.Subscribe(ctx, channel); err != nil {
		return err
	}
	s.drainKick()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.kick:
			return errKicked
		default:
		}
		msg, err := ps.ReceiveTimeout(ctx, pingEvery)
		if isTimeout(err) {
			if time.Since(last) > 3*pingEvery {
				return errSilent
			}
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		last = time.Now()
		s.receive(msg, sink)
	}
}

// receive handles one message: a subscription confirmation resyncs and
// marks the feed healthy; a change is applied.
func (s *Shared) receive(msg any, sink resources.ChangeSink) {
	switch m := msg.(type) {
	case *redis.Subscription:
		if m.Kind == "subscribe" {
			sink.Resync()
			s.setHealthy(true, nil)
		}
	case *redis.Message:
		c, err := resources.ParseChange(m.Payload)
		if err != nil {
			s.logger.Warn("ignoring a malformed change-feed message; resyncing", "error", err)
			sink.Resync()
			return
		}
		sink.Changed(c)
	}
}

func (s *Shared) drainKick() {
	select {
	case <-s.kick:
	default:
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

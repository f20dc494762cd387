package api

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/resources"
)

// liveTokens is a replica's view of the tokens that can still authenticate
// (not revoked, not expired when read). The limit on failed
// authentications consults it: an address that used up its failures is
// refused lookups of anything else, never a live credential. It is loaded
// before serving, reloaded whole every re-check interval and on a resync,
// and one token is re-read when the change feed says it changed (created,
// revoked, extended) — on any replica or in a portal command. Reads and
// their installation are serialised by loadMu, so a reload never installs
// a read older than a re-read it overtook.
//
// It holds the first 8 bytes of each keyed hash (a uniformly random
// value), 8 bytes and a map slot a token: two live tokens sharing them (one
// chance in about 2^64 / n) would only cost a refused address one lookup
// more, or, after one of the two is revoked, refuse the other from that
// address until the next reload.
type liveTokens struct {
	creds    resources.Credentials
	reloads  reloads
	logger   *slog.Logger
	loadMu   sync.Mutex
	mu       sync.RWMutex
	prefixes map[uint64]struct{}
	loaded   atomic.Bool
}

func newLiveTokens(creds resources.Credentials, recheck time.Duration, logger *slog.Logger) *liveTokens {
	return &liveTokens{creds: creds, reloads: newReloads(recheck), logger: logger,
		prefixes: map[uint64]struct{}{}}
}

// prefix is the part of a keyed hash the view keeps; false for a hash too
// short to be one.
func prefix(hash []byte) (uint64, bool) {
	if len(hash) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(hash), true
}

// has reports whether hash may be a live token's; false before the first
// load.
func (v *liveTokens) has(hash []byte) bool {
	p, ok := prefix(hash)
	if !ok || !v.loaded.Load() {
		return false
	}
	v.mu.RLock()
	_, ok = v.prefixes[p]
	v.mu.RUnlock()
	return ok
}

// Load replaces the view with every live token read now.
func (v *liveTokens) Load(ctx context.Context) error {
	v.loadMu.Lock()
	defer v.loadMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, gatewayLoadTimeout)
	defer cancel()
	v.mu.RLock()
	prefixes := make(map[uint64]struct{}, len(v.prefixes))
	v.mu.RUnlock()
	err := v.creds.EachLiveTokenHash(ctx, func(hash []byte) {
		if p, ok := prefix(hash); ok {
			prefixes[p] = struct{}{}
		}
	})
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.prefixes = prefixes
	v.mu.Unlock()
	v.loaded.Store(true)
	return nil
}

// Changed re-reads token id and puts it in the view or takes it out; a
// failed read leaves the view as it was and asks for a full reload.
func (v *liveTokens) Changed(id int64) {
	v.loadMu.Lock()
	defer v.loadMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), gatewayLoadTimeout)
	defer cancel()
	hash, live, err := v.creds.TokenHash(ctx, id)
	if err != nil {
		v.logger.Warn("re-reading a changed token for the view of live tokens failed; reloading it",
			"token_id", id, "error", err)
		v.reloads.ask()
		return
	}
	p, ok := prefix(hash)
	if !ok { // gone: the next reload drops it
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if live {
		v.prefixes[p] = struct{}{}
	} else {
		delete(v.prefixes, p)
	}
}

// Run reloads the view every re-check interval and when asked, until ctx
// ends.
func (v *liveTokens) Run(ctx context.Context) {
	tick := time.NewTicker(v.reloads.recheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-v.reloads.asked:
		}
		v.reloads.reload(ctx, v.Load, v.logger, "reloading the view of live tokens failed; retrying")
	}
}

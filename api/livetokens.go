package api

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/resources"
)

// liveTokens is a replica's view of the keyed hashes of the tokens that can
// still authenticate (not revoked, not expired when read). The limit on
// failed authentications consults it: an address that used up its failures
// is refused lookups of anything else, never a live credential. It is
// loaded before serving, reloaded whole every re-check interval and on a
// resync, and one token is re-read when the change feed says it changed
// (created, revoked, extended) — on any replica or in a portal command.
// Reads and their installation are serialised by loadMu, so a reload never
// installs a read older than a re-read it overtook.
type liveTokens struct {
	creds     resources.Credentials
	recheck   time.Duration
	logger    *slog.Logger
	loadMu    sync.Mutex
	mu        sync.RWMutex
	byHash    map[[sha256.Size]byte]int64
	byID      map[int64][sha256.Size]byte
	loaded    atomic.Bool
	reloadNow chan struct{}
}

func newLiveTokens(creds resources.Credentials, recheck time.Duration, logger *slog.Logger) *liveTokens {
	return &liveTokens{creds: creds, recheck: recheck, logger: logger,
		byHash: map[[sha256.Size]byte]int64{}, byID: map[int64][sha256.Size]byte{},
		reloadNow: make(chan struct{}, 1)}
}

// has reports whether hash is a live token's; false before the first load.
func (v *liveTokens) has(hash []byte) bool {
	if len(hash) != sha256.Size || !v.loaded.Load() {
		return false
	}
	v.mu.RLock()
	_, ok := v.byHash[[sha256.Size]byte(hash)]
	v.mu.RUnlock()
	return ok
}

// Load replaces the view with every live token read now.
func (v *liveTokens) Load(ctx context.Context) error {
	v.loadMu.Lock()
	defer v.loadMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, gatewayLoadTimeout)
	defer cancel()
	hashes, err := v.creds.LiveTokenHashes(ctx)
	if err != nil {
		return err
	}
	byHash := make(map[[sha256.Size]byte]int64, len(hashes))
	byID := make(map[int64][sha256.Size]byte, len(hashes))
	for id, h := range hashes {
		if len(h) == sha256.Size {
			byHash[[sha256.Size]byte(h)], byID[id] = id, [sha256.Size]byte(h)
		}
	}
	v.mu.Lock()
	v.byHash, v.byID = byHash, byID
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
	h, err := v.creds.LiveTokenHash(ctx, id)
	if err != nil {
		v.logger.Warn("re-reading a changed token for the view of live tokens failed; reloading it",
			"token_id", id, "error", err)
		v.askReload()
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if old, ok := v.byID[id]; ok {
		delete(v.byHash, old)
		delete(v.byID, id)
	}
	if len(h) == sha256.Size {
		v.byHash[[sha256.Size]byte(h)], v.byID[id] = id, [sha256.Size]byte(h)
	}
}

// askReload makes Run reload the whole view soon (a resync).
func (v *liveTokens) askReload() {
	select {
	case v.reloadNow <- struct{}{}:
	default:
	}
}

// Run reloads the view every re-check interval and when asked (a failed
// reload is retried after gatewayReloadRetry) until ctx ends.
func (v *liveTokens) Run(ctx context.Context) {
	reload := time.NewTicker(v.recheck)
	defer reload.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-reload.C:
		case <-v.reloadNow:
		}
		if err := v.Load(ctx); err != nil && ctx.Err() == nil {
			v.logger.Warn("reloading the view of live tokens failed; retrying", "error", err)
			time.AfterFunc(gatewayReloadRetry, v.askReload)
		}
	}
}

package api

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"platformapi/resources"
)

// Timing of the view of live gateway keys: one read from PostgreSQL may
// take gatewayLoadTimeout; a failed full load is tried again after
// gatewayReloadRetry; uses are flushed every DefaultGatewayUseFlush.
const (
	gatewayLoadTimeout     = 5 * time.Second
	gatewayReloadRetry     = time.Second
	DefaultGatewayUseFlush = 5 * time.Second
)

// errGatewayKeysNotLoaded answers verify before the first load succeeded.
var errGatewayKeysNotLoaded = errors.New("the gateway keys are not loaded yet")

// liveGatewayKeys is a replica's in-memory view of the gateway keys that are
// not revoked (hash → id, name, tier, expiry), so /ai-gateway/verify reads
// no database. It is loaded at start, reloaded whole on a resync and every
// re-check interval, and re-reads one key when the change feed says it
// changed. Store reads and their installation are serialised by loadMu; a
// full reload never installs a key whose own re-read is pending.
type liveGatewayKeys struct {
	svc        resources.GatewayKeyOpener
	flushEvery time.Duration
	now        func() time.Time
	logger     *slog.Logger
	loadMu     sync.Mutex
	mu         sync.RWMutex
	byHash     map[[sha256.Size]byte]*gatewayEntry
	byID       map[int64][sha256.Size]byte
	pending    map[int64]int  // key id → re-reads waiting for loadMu
	loaded     atomic.Bool    // set once the first load succeeded (mac is set)
	mac        *resources.MAC // under the server key, set by the first load
	uses       useLog
	reloads    reloads
	size       prometheus.Gauge
}

// gatewayEntry is one live key with its answer's header values built once,
// inside the entry: the request path hands out one-element slices of vals
// (header), so answering allocates nothing and a key costs the view one
// allocation besides its id's text.
type gatewayEntry struct {
	id        int64
	expiresAt *time.Time
	vals      [3]string // indexed by valID, valName, valTier ("": no tier)
}

// Indexes of gatewayEntry.vals.
const (
	valID = iota
	valName
	valTier
)

// header is the value of header i as http.Header holds it; its capacity is
// its length, so an append to it copies rather than writes into the view.
func (e *gatewayEntry) header(i int) []string { return e.vals[i : i+1 : i+1] }

func newLiveGatewayKeys(svc resources.GatewayKeyOpener, cfg Config) *liveGatewayKeys {
	v := &liveGatewayKeys{svc: svc, flushEvery: cfg.GatewayKeyUseFlush,
		now: cfg.Now, logger: cfg.Logger, byHash: map[[sha256.Size]byte]*gatewayEntry{},
		byID: map[int64][sha256.Size]byte{}, pending: map[int64]int{}, reloads: newReloads(cfg.ViewRecheck),
		uses: useLog{last: map[int64]int64{}, spare: map[int64]int64{}}}
	v.size = prometheus.NewGauge(prometheus.GaugeOpts{Name: "platformapi_gateway_keys_live",
		Help: "AI gateway keys in this replica's view (not revoked; expired ones included)."})
	cfg.Metrics.MustRegister(v.size)
	return v
}

func newEntry(k resources.LiveGatewayKey) *gatewayEntry {
	e := &gatewayEntry{id: k.ID, expiresAt: k.ExpiresAt,
		vals: [3]string{strconv.FormatInt(k.ID, 10), headerSafe(k.Name), ""}}
	if k.Tier != nil {
		e.vals[valTier] = headerSafe(*k.Tier)
	}
	return e
}

// headerSafe turns control characters (which a header value cannot carry)
// into spaces; other text, UTF-8 included, passes as it is.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// lookup finds the live key whose value this is: nil when there is none;
// errGatewayKeysNotLoaded before the first load. A value without the key's
// shape is refused before any hashing.
func (v *liveGatewayKeys) lookup(value string) (*gatewayEntry, error) {
	if !resources.GatewayKeyShaped(value) {
		return nil, nil
	}
	if !v.loaded.Load() {
		return nil, errGatewayKeysNotLoaded
	}
	sum := v.mac.Sum(value)
	v.mu.RLock()
	e := v.byHash[sum]
	v.mu.RUnlock()
	return e, nil
}

// Load reads every live key (and, the first time, the server key) and
// replaces the view with them.
func (v *liveGatewayKeys) Load(ctx context.Context) error {
	v.loadMu.Lock()
	defer v.loadMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, gatewayLoadTimeout)
	defer cancel()
	if err := v.loadMACKey(ctx); err != nil {
		return err
	}
	keys, err := v.svc.LiveGatewayKeys(ctx)
	if err != nil {
		return err
	}
	byHash := make(map[[sha256.Size]byte]*gatewayEntry, len(keys))
	byID := make(map[int64][sha256.Size]byte, len(keys))
	for _, k := range keys {
		putKey(byHash, byID, k)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for id := range v.pending { // their own re-read installs them
		if h, ok := byID[id]; ok {
			delete(byHash, h)
			delete(byID, id)
		}
	}
	v.byHash, v.byID = byHash, byID
	v.loaded.Store(true)
	v.size.Set(float64(len(byID)))
	return nil
}

// putKey adds k to the maps; a hash of another length (never stored by
// this code) cannot match a value and is skipped.
func putKey(byHash map[[sha256.Size]byte]*gatewayEntry, byID map[int64][sha256.Size]byte,
	k resources.LiveGatewayKey) {
	if len(k.Hash) != sha256.Size {
		return
	}
	h := [sha256.Size]byte(k.Hash)
	byHash[h], byID[k.ID] = newEntry(k), h
}

// loadMACKey fetches the server key values are hashed under, once.
func (v *liveGatewayKeys) loadMACKey(ctx context.Context) error {
	if v.mac != nil {
		return nil
	}
	key, err := v.svc.GatewayKeyHashKey(ctx)
	if err != nil {
		return err
	}
	v.mac = resources.NewMAC(key)
	return nil
}

// Changed applies a change of key id: its current value stops opening the
// gateway at once, then the key is read again and, unless revoked, put
// back with its new value. A failed read leaves it out (refused) and asks
// for a full reload.
func (v *liveGatewayKeys) Changed(id int64) {
	v.mu.Lock()
	v.dropLocked(id)
	v.pending[id]++
	v.mu.Unlock()
	v.loadMu.Lock()
	defer v.loadMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), gatewayLoadTimeout)
	defer cancel()
	k, err := v.svc.LiveGatewayKey(ctx, id)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pending[id]--; v.pending[id] == 0 {
		delete(v.pending, id)
	}
	v.dropLocked(id)
	if err != nil {
		v.logger.Warn("re-reading a changed gateway key failed: it is refused until the view reloads",
			"gateway_key_id", id, "error", err)
		v.reloads.ask()
		return
	}
	if k != nil {
		putKey(v.byHash, v.byID, *k)
	}
	v.size.Set(float64(len(v.byID)))
}

func (v *liveGatewayKeys) dropLocked(id int64) {
	if h, ok := v.byID[id]; ok {
		delete(v.byHash, h)
		delete(v.byID, id)
	}
}

// Run reloads the view every re-check interval and when asked (a resync, a
// failed read; a failed reload is retried after gatewayReloadRetry), and
// flushes the keys' last uses every flush interval and once more when ctx
// ends.
func (v *liveGatewayKeys) Run(ctx context.Context) {
	reload, flush := time.NewTicker(v.reloads.recheck), time.NewTicker(v.flushEvery)
	defer reload.Stop()
	defer flush.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), gatewayLoadTimeout)
			v.flushUses(final)
			cancel()
			return
		case <-reload.C:
			v.reload(ctx)
		case <-v.reloads.asked:
			v.reload(ctx)
		case <-flush.C:
			v.flushUses(ctx)
		}
	}
}

func (v *liveGatewayKeys) reload(ctx context.Context) {
	v.reloads.reload(ctx, v.Load, v.logger,
		"reloading the gateway keys failed: verify answers from the last view; retrying")
}

// flushUses writes the last uses noted since the previous flush in one
// statement; after a failure they are kept for the next flush.
func (v *liveGatewayKeys) flushUses(ctx context.Context) {
	uses := v.uses.take()
	if len(uses) == 0 {
		return
	}
	if err := v.svc.RecordGatewayKeyUses(ctx, uses); err != nil {
		v.logger.Warn("writing the gateway keys' last use failed; kept for the next flush", "error", err)
		v.uses.restore(uses)
	}
}

// useLog notes the latest use of each key between two flushes. Noting a
// key seen since the last flush takes a lock and a map write, no allocation.
type useLog struct {
	mu    sync.Mutex
	last  map[int64]int64 // key id → latest use, Unix nanoseconds
	spare map[int64]int64
}

func (u *useLog) note(id int64, at time.Time) {
	ns := at.UnixNano()
	u.mu.Lock()
	if ns > u.last[id] {
		u.last[id] = ns
	}
	u.mu.Unlock()
}

// take returns the uses noted so far and starts an empty log.
func (u *useLog) take() []resources.GatewayKeyUse {
	u.mu.Lock()
	taken := u.last
	u.last, u.spare = u.spare, nil
	u.mu.Unlock()
	out := make([]resources.GatewayKeyUse, 0, len(taken))
	for id, ns := range taken {
		at := time.Unix(0, ns).UTC().Truncate(time.Microsecond) // what PostgreSQL keeps
		out = append(out, resources.GatewayKeyUse{ID: id, At: at})
	}
	clear(taken)
	u.mu.Lock()
	u.spare = taken
	u.mu.Unlock()
	return out
}

// restore puts back uses a failed flush did not write.
func (u *useLog) restore(uses []resources.GatewayKeyUse) {
	for _, use := range uses {
		u.note(use.ID, use.At)
	}
}

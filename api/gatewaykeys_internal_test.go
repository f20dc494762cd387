package api

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/resources"
)

// fixedKeys is the outside world of the view in this test: a fixed set of
// live keys under a fixed server key.
type fixedKeys struct {
	resources.GatewayKeyOpener
	key  resources.Pepper
	live []resources.LiveGatewayKey
}

func (f fixedKeys) GatewayKeyHashKey(context.Context) (resources.Pepper, error) { return f.key, nil }

func (f fixedKeys) LiveGatewayKeys(context.Context) ([]resources.LiveGatewayKey, error) {
	return f.live, nil
}

// The request path of verify hashes and looks up without allocating: the
// HMAC and its buffers come from a pool, the map key is an array.
func TestLiveGatewayKeys_Lookup_FindsTheKeyWithoutAllocating(t *testing.T) {
	key := resources.Pepper("server-key-0123456789abcdef")
	value, other := resources.NewGatewayKeyValue(), resources.NewGatewayKeyValue()
	tier := "pro"
	v := newLiveGatewayKeys(fixedKeys{key: key, live: []resources.LiveGatewayKey{
		{ID: 7, Name: "ci\nrunner", Tier: &tier, Hash: key.Hash(value)}}},
		Config{Now: time.Now, Metrics: prometheus.NewRegistry()})
	if _, err := v.lookup(value); err != errGatewayKeysNotLoaded {
		t.Fatalf("before the first load: %v", err)
	}
	if err := v.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value string
		id    int64
	}{{value, 7}, {other, 0}, {"sk-gw-short", 0}} {
		e, err := v.lookup(c.value)
		if err != nil || (e == nil) != (c.id == 0) || e != nil && e.id != c.id {
			t.Fatalf("lookup: %+v %v, want id %d", e, err, c.id)
		}
	}
	e, _ := v.lookup(value)
	got := [][]string{e.header(valID), e.header(valName), e.header(valTier)}
	if diff := cmp.Diff([][]string{{"7"}, {"ci runner"}, {"pro"}}, got); diff != "" {
		t.Fatalf("headers (-want +got)\n%s", diff)
	}
	if grown := append(e.header(valID), "more"); &grown[0] == &e.vals[valID] {
		t.Fatal("appending to a header value writes into the view")
	}
	if raceEnabled {
		return // sync.Pool drops items at random under the race detector
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = v.lookup(value) }); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
	if n := testing.AllocsPerRun(1000, func() { v.uses.note(7, time.Now()) }); n != 0 {
		t.Fatalf("%v allocations per noted use", n)
	}
}

// recordingKeys records the uses the view writes.
type recordingKeys struct {
	fixedKeys
	written chan []resources.GatewayKeyUse
}

func (r recordingKeys) RecordGatewayKeyUses(_ context.Context, uses []resources.GatewayKeyUse) error {
	r.written <- uses
	return nil
}

// A use noted just before shutdown is written when Run stops, not lost
// with the flush interval it did not reach.
func TestLiveGatewayKeys_Run_WritesTheLastUsesWhenStopped(t *testing.T) {
	rec := recordingKeys{fixedKeys: fixedKeys{key: resources.Pepper("server-key-0123456789abcdef")},
		written: make(chan []resources.GatewayKeyUse, 4)}
	v := newLiveGatewayKeys(rec, Config{Now: time.Now, Metrics: prometheus.NewRegistry(),
		ViewRecheck: time.Hour, GatewayKeyUseFlush: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); v.Run(ctx) }()
	at := time.Date(2026, 11, 26, 12, 0, 0, 1500, time.UTC)
	v.uses.note(7, at.Add(-time.Second))
	v.uses.note(7, at)
	v.uses.note(9, at.Add(-time.Minute))
	cancel()
	<-done
	select {
	case got := <-rec.written:
		want := map[int64]time.Time{7: at.Truncate(time.Microsecond), 9: at.Add(-time.Minute).Truncate(time.Microsecond)}
		if len(got) != len(want) {
			t.Fatalf("written %v, want %v", got, want)
		}
		for _, u := range got {
			if !u.At.Equal(want[u.ID]) {
				t.Fatalf("key %d written at %v, want %v", u.ID, u.At, want[u.ID])
			}
		}
	default:
		t.Fatal("stopping Run wrote no use")
	}
}

// Each live key costs the view two small allocations (its entry, with
// the answer's header values inside, and the text of its id) besides its
// slots in the two maps: with 10,000 keys the view is a fifth of a
// replica's live heap, and every byte of it is paid 2.5 times in RSS.
func TestLiveGatewayKeys_Load_TwoAllocationsAKey(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	key := resources.Pepper("server-key-0123456789abcdef")
	const n = 1000
	tier, expires := "pro", time.Now().Add(time.Hour)
	live := make([]resources.LiveGatewayKey, n)
	for i := range live {
		live[i] = resources.LiveGatewayKey{ID: int64(i + 1), Name: "key", Tier: &tier, ExpiresAt: &expires,
			Hash: key.Hash(resources.NewGatewayKeyValue())}
	}
	v := newLiveGatewayKeys(fixedKeys{key: key, live: live}, Config{Now: time.Now, Metrics: prometheus.NewRegistry()})
	if err := v.Load(context.Background()); err != nil { // the server key, once
		t.Fatal(err)
	}
	perKey := testing.AllocsPerRun(5, func() { _ = v.Load(context.Background()) }) / n
	if perKey > 2.1 {
		t.Fatalf("%.2f allocations a key, want 2", perKey)
	}
}

package sharedcache_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"platformapi/api"
	"platformapi/api/sharedcache"
	"platformapi/api/sharedcache/redistest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// sink records what the feed delivered.
type sink struct {
	mu      sync.Mutex
	changes []resources.Change
	resyncs int
}

func (s *sink) Changed(c resources.Change) {
	s.mu.Lock()
	s.changes = append(s.changes, c)
	s.mu.Unlock()
}
func (s *sink) Resync() { s.mu.Lock(); s.resyncs++; s.mu.Unlock() }
func (s *sink) got() ([]resources.Change, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]resources.Change(nil), s.changes...), s.resyncs
}

// replica is one process's Shared with its sink and log, running its feed.
type replica struct {
	*sharedcache.Shared
	sink *sink
	log  *testkit.LockedBuffer
}

func startReplica(t *testing.T, url string, perMinute int) *replica {
	t.Helper()
	return startReplicaWith(t, sharedcache.Options{URL: url, PerMinute: perMinute})
}

// startReplicaWith starts a replica of o (its Logger writes the replica's log).
func startReplicaWith(t *testing.T, o sharedcache.Options) *replica {
	t.Helper()
	r := &replica{sink: &sink{}, log: &testkit.LockedBuffer{}}
	o.Logger = slog.New(slog.NewJSONHandler(r.log, nil))
	var err error
	r.Shared, err = sharedcache.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx, r.sink); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = r.Close() })
	return r
}

// take spends n units alternating between the replicas and counts refusals.
func take(t *testing.T, key string, n int, rs ...*replica) (refused int) {
	t.Helper()
	for i := range n {
		d, err := rs[i%len(rs)].Take(context.Background(), key, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			refused++
		}
	}
	return refused
}

func TestShared_BudgetSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, b := startReplica(t, srv.URL(), 10), startReplica(t, srv.URL(), 10)
	testkit.Eventually(t, 0, "both feeds are healthy", func() bool { return a.Healthy() && b.Healthy() })
	if refused := take(t, "token:1", 14, a, b); refused != 4 {
		t.Fatalf("14 requests over two replicas against a budget of 10: %d refused, want 4", refused)
	}
	d, err := b.Take(context.Background(), "token:1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.RetryAfter <= 0 || d.Limit != 10 {
		t.Fatalf("refusal: %+v", d)
	}
}

func TestShared_Publish_ReachesEveryReplica(t *testing.T) {
	srv := redistest.Start(t)
	a, b := startReplica(t, srv.URL(), 10), startReplica(t, srv.URL(), 10)
	testkit.Eventually(t, 0, "both feeds are healthy", func() bool { return a.Healthy() && b.Healthy() })
	change := resources.TokenChanged(42)
	a.Publish(context.Background(), change)
	testkit.Eventually(t, 0, "b received the change", func() bool { c, _ := b.sink.got(); return len(c) == 1 })
	testkit.Eventually(t, 0, "a received it locally and from the feed", func() bool { c, _ := a.sink.got(); return len(c) == 2 })
	got, _ := b.sink.got()
	if d := cmp.Diff([]resources.Change{change}, got); d != "" {
		t.Fatalf("delivered change (-want +got):\n%s", d)
	}
}

func TestShared_RedisDown_FallsBackThenRecoversAndResyncs(t *testing.T) {
	srv := redistest.Start(t)
	a, b := startReplica(t, srv.URL(), 10), startReplica(t, srv.URL(), 10)
	testkit.Eventually(t, 0, "both feeds are healthy", func() bool { return a.Healthy() && b.Healthy() })
	_, resyncsBefore := a.sink.got()

	srv.Stop()
	testkit.Eventually(t, 0, "both replicas fall back", func() bool { return !a.Healthy() && !b.Healthy() })
	// Each replica now keeps its own budget of 10: 14 requests over two pass.
	if refused := take(t, "token:2", 14, a, b); refused != 0 {
		t.Fatalf("in fallback each replica has its own budget: %d of 14 refused", refused)
	}
	a.Publish(context.Background(), resources.TokenChanged(7)) // cannot reach b; logged, never fails

	srv.Resume()
	testkit.Eventually(t, 0, "both recover", func() bool { return a.Healthy() && b.Healthy() })
	if _, resyncs := a.sink.got(); resyncs <= resyncsBefore {
		t.Fatal("recovery did not resync the cache (events may have been missed)")
	}
	if refused := take(t, "token:3", 14, a, b); refused != 4 {
		t.Fatalf("after recovery the budget is shared again: %d of 14 refused, want 4", refused)
	}
	logs := a.log.String()
	if n := strings.Count(logs, "shared cache (Redis) unreachable"); n != 1 {
		t.Fatalf("the fallback was logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "publishing a change to the shared cache failed") {
		t.Fatalf("a failed publish was not logged:\n%s", logs)
	}
}

func TestShared_UnreachableAtStart_ServesLocally(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	srv.Stop()
	a := startReplica(t, url, 10)
	testkit.Eventually(t, 0, "the fallback is logged", func() bool {
		return strings.Contains(a.log.String(), "shared cache (Redis) unreachable")
	})
	if refused := take(t, "token:4", 11, a); refused != 1 {
		t.Fatalf("local budget of 10: %d of 11 refused, want 1", refused)
	}
}

func TestNew_MalformedURL_Error(t *testing.T) {
	if _, err := sharedcache.New(sharedcache.Options{URL: "http://nope"}); err == nil {
		t.Fatal("a non-redis URL was accepted")
	}
}

func TestShared_Metrics_FallbackGaugeAndDecisions(t *testing.T) {
	srv := redistest.Start(t)
	a := startReplica(t, srv.URL(), 10)
	reg := prometheus.NewRegistry()
	a.Register(reg)
	testkit.Eventually(t, 0, "the feed is healthy", a.Healthy)
	take(t, "token:9", 1, a)
	fallback := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "platformapi_shared_cache_fallback" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no fallback gauge")
		return -1
	}
	if v := fallback(); v != 0 {
		t.Fatalf("fallback gauge %v while healthy", v)
	}
	srv.Stop()
	testkit.Eventually(t, 0, "the gauge shows the fallback", func() bool { return fallback() == 1 })
	if n := testutil.CollectAndCount(reg, "platformapi_rate_limit_decisions_total"); n != 1 {
		t.Fatalf("%d decision series, want 1 (shared, allowed)", n)
	}
}

// Issue 18, R1: with Redis, the failed-authentication budget of an address
// is one across the replicas, as the rate budget is.
func TestShared_AuthFailureBudgetSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, b := startReplica(t, srv.URL(), 10), startReplica(t, srv.URL(), 10)
	testkit.Eventually(t, 0, "both feeds are healthy", func() bool { return a.Healthy() && b.Healthy() })
	fa, fb := a.AuthFailures(), b.AuthFailures()
	refused := 0
	for i := range api.AuthFailuresPerMinute + 10 {
		d, err := []api.RateLimiter{fa, fb}[i%2].Take(context.Background(), "auth-failures:10.0.0.1", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			refused++
		}
	}
	if refused != 10 {
		t.Fatalf("%d failures over two replicas against a budget of %d: %d refused, want 10",
			api.AuthFailuresPerMinute+10, api.AuthFailuresPerMinute, refused)
	}
}

// TestShared_MessageOfANewerRelease_DeliveredNotResynced: a newer release
// on the same Redis may publish a member or a kind this release does not
// know. The known part is delivered (the credential cache drops everything
// for a kind it does not know) and the subscription stays healthy.
func TestShared_MessageOfANewerRelease_DeliveredNotResynced(t *testing.T) {
	srv := redistest.Start(t)
	a := startReplica(t, srv.URL(), 10)
	testkit.Eventually(t, 0, "the feed is healthy", a.Healthy)
	newer := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = newer.Close() })
	_, resyncs := a.sink.got()
	for _, payload := range []string{
		`{"kind":"token","token_id":4,"reason":"expired"}`,
		`{"kind":"session","session_id":9,"scope":{"all":true}}`,
	} {
		if err := newer.Publish(context.Background(), "platformapi:changes", payload).Err(); err != nil {
			t.Fatal(err)
		}
	}
	want := []resources.Change{resources.TokenChanged(4), {Kind: "session"}}
	testkit.Eventually(t, 0, "both messages delivered", func() bool {
		c, _ := a.sink.got()
		return len(c) == 2
	})
	got, resyncsAfter := a.sink.got()
	if d := cmp.Diff(want, got); d != "" || resyncsAfter != resyncs || !a.Healthy() {
		t.Fatalf("delivered (-want +got):\n%s\nresyncs %d → %d, healthy %v",
			d, resyncs, resyncsAfter, a.Healthy())
	}
}

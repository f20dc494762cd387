package sharedcache_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/api/sharedcache/redistest"
	"platformapi/resources/testkit"
)

// decisions reads the replica's rate-limit decisions by where and outcome.
func decisions(t *testing.T, r *replica) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	r.Register(reg)
	out := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "platformapi_rate_limit_decisions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["where"]+" "+labels["outcome"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

func TestShared_BusyToken_SpendsReservedUnitsAndAsksRedisLess(t *testing.T) {
	srv := redistest.Start(t)
	a := startReplica(t, srv.URL(), 600)
	testkit.Eventually(t, 0, "the feed is healthy", a.Healthy)
	if refused := take(t, "token:busy", 200, a); refused != 0 {
		t.Fatalf("200 of a budget of 600: %d refused", refused)
	}
	d := decisions(t, a)
	if d["reserved allowed"] < 150 || d["shared allowed"] > 50 {
		t.Fatalf("a busy token should mostly spend reserved units: decisions %v", d)
	}
	if d["shared allowed"]+d["reserved allowed"] != 200 {
		t.Fatalf("decisions %v, want 200 allowed in all", d)
	}
}

func TestShared_Reservations_NeverAdmitMoreThanTheSharedBudget(t *testing.T) {
	srv := redistest.Start(t)
	a, b := startReplica(t, srv.URL(), 600), startReplica(t, srv.URL(), 600)
	testkit.Eventually(t, 0, "both feeds are healthy", func() bool { return a.Healthy() && b.Healthy() })
	start := time.Now()
	refused := take(t, "token:shared", 1000, a, b)
	allowed := 1000 - refused
	refill := int(time.Since(start).Seconds()*10) + 1
	if allowed > 600+refill {
		t.Fatalf("%d allowed over two replicas in %v: more than the budget of 600 (+%d refilled)",
			allowed, time.Since(start), refill)
	}
	// Units a replica reserved but could not spend before the other was
	// refused are the only ones the client may miss: at most 20 each.
	if allowed < 600-2*20 {
		t.Fatalf("%d allowed: reservations stranded more than 20 units per replica", allowed)
	}
	for _, r := range []*replica{a, b} {
		if d := decisions(t, r); d["shared refused"] == 0 {
			t.Fatalf("near the limit each replica asks Redis and is refused: decisions %v", d)
		}
	}
	// Spent: the next request is refused on both replicas.
	for _, r := range []*replica{a, b} {
		if dec, err := r.Take(context.Background(), "token:shared", 30); err != nil || dec.Allowed {
			t.Fatalf("30 more units after the budget was spent: %+v, %v", dec, err)
		}
	}
}

// RateLimit-Remaining with Redis counts as the replica's own bucket does:
// a fresh token of 600 that spent one unit has 599 left (redis_rate
// truncates its float count, which lands a hair under a whole number about
// half the time, and said 598). Later answers depend on the time between
// requests (a unit refills every 100 ms), so only the first is asserted,
// on 20 fresh tokens.
func TestShared_Remaining_CountsWholeUnitsFromTheFirstRequest(t *testing.T) {
	srv := redistest.Start(t)
	r := startReplica(t, srv.URL(), 600)
	testkit.Eventually(t, 0, "the feed is healthy", r.Healthy)
	var got []int
	for i := range 20 {
		d, err := r.Take(context.Background(), fmt.Sprintf("token:fresh-%d", i), 1)
		if err != nil || !d.Allowed {
			t.Fatalf("take: %+v %v", d, err)
		}
		got = append(got, d.Remaining)
	}
	want := slices.Repeat([]int{599}, 20)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("remaining after each fresh token's first request (-want +got)\n%s", diff)
	}
}

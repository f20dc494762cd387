package sharedcache

import (
	"testing"
	"time"
)

func TestReserve_Extra_FollowsUseRemainingAndCap(t *testing.T) {
	l := &rateLimiter{maxReserve: 20}
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name string
		r    reserve
		want int
	}{
		{"nothing answered yet: exact", reserve{}, 0},
		{"idle key: nothing used in the last second", reserve{known: true, remaining: 600}, 0},
		{"a lifetime at the last second's pace", reserve{known: true, remaining: 600, lastUsed: 4}, 12},
		{"or this second's so far", reserve{known: true, remaining: 600, lastUsed: 2, winUsed: 5}, 15},
		{"a slow key: one unit a second", reserve{known: true, remaining: 600, lastUsed: 1}, 3},
		{"at most the cap", reserve{known: true, remaining: 600, lastUsed: 90}, 20},
		{"at most a tenth of what remains", reserve{known: true, remaining: 55, lastUsed: 90}, 5},
		{"near the limit: exact", reserve{known: true, remaining: 9, lastUsed: 90}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.winStart = t0
			if got := l.extra(&tt.r); got != tt.want {
				t.Fatalf("extra = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestReserve_Spent_CountsPerSecondAndForgetsQuietSeconds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := reserve{winStart: t0}
	r.spent(3, t0.Add(100*time.Millisecond))
	r.spent(2, t0.Add(900*time.Millisecond))
	if r.winUsed != 5 || r.lastUsed != 0 {
		t.Fatalf("first second: %+v", r)
	}
	r.spent(1, t0.Add(1100*time.Millisecond))
	if r.winUsed != 1 || r.lastUsed != 5 {
		t.Fatalf("next second: lastUsed %d winUsed %d, want 5 and 1", r.lastUsed, r.winUsed)
	}
	r.spent(1, t0.Add(5*time.Second))
	if r.winUsed != 1 || r.lastUsed != 0 {
		t.Fatalf("after quiet seconds: lastUsed %d winUsed %d, want 0 and 1", r.lastUsed, r.winUsed)
	}
}

func TestReserve_UnspentUnitsExpire(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &rateLimiter{maxReserve: 20, now: func() time.Time { return now }, reserves: map[string]*reserve{}}
	l.reserves["k"] = &reserve{units: 5, until: now.Add(reserveLifetime), known: true, remaining: 500, winStart: now}
	if _, _, ok := l.takeReserved("k", 1); !ok {
		t.Fatal("a fresh reservation was not spent")
	}
	now = now.Add(reserveLifetime + time.Millisecond)
	if _, _, ok := l.takeReserved("k", 1); ok {
		t.Fatal("an expired reservation was spent")
	}
	if u := l.reserves["k"].units; u != 0 {
		t.Fatalf("%d expired units kept", u)
	}
}

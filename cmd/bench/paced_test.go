package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunPaced_LatencyCountsFromTheScheduledMoment: a paced load sends its
// requests on schedule with the keys taking turns, counts non-2xx answers,
// and an answer that stalls makes the requests scheduled behind it late by
// that much: with 200 requests the p99 is not the one stalled answer but
// those that waited behind it, as an open-model load must count them.
func TestRunPaced_LatencyCountsFromTheScheduledMoment(t *testing.T) {
	tests := []struct {
		name       string
		stall      bool
		status     int
		wantNon2xx bool
		slowP99    bool
	}{
		{"fast answers", false, http.StatusOK, false, false},
		{"one answer stalls 400 ms", true, http.StatusOK, false, true},
		{"refusals are counted", false, http.StatusUnauthorized, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			keys := map[string]bool{}
			seen := make(chan string, 1000)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen <- r.Header.Get("Authorization")
				if tt.stall && n.Add(1) == 5 {
					time.Sleep(400 * time.Millisecond)
				}
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			r, err := runPaced(context.Background(), srv.URL, "/", []string{"a", "b"}, 200, 1, time.Second)
			close(seen)
			for k := range seen {
				keys[k] = true
			}
			if err != nil || r.requests < 190 || r.requests > 200 || len(keys) != 2 {
				t.Fatalf("%d requests, keys %v, %v", r.requests, keys, err)
			}
			if r.cpu["wrk"] <= 0 { // the client's CPU: this process sent the load
				t.Fatalf("client CPU %v, want the time this process spent", r.cpu["wrk"])
			}
			if (r.non2xx == r.requests) != tt.wantNon2xx || !tt.wantNon2xx && r.non2xx != 0 {
				t.Fatalf("non-2xx %d of %d", r.non2xx, r.requests)
			}
			p99, _ := time.ParseDuration(r.p99)
			if slow := p99 >= 300*time.Millisecond; slow != tt.slowP99 {
				t.Fatalf("p99 %s", r.p99)
			}
		})
	}
}

func TestLatency_WrittenAsWrkWritesIt(t *testing.T) {
	for d, want := range map[time.Duration]string{594941 * time.Nanosecond: "594.94us",
		1698902 * time.Nanosecond: "1.70ms", 12 * time.Millisecond: "12.00ms"} {
		if got := latency(d); got != want {
			t.Errorf("latency(%s) = %q, want %q", d, got, want)
		}
	}
}

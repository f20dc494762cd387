package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReport_RatioOnlyOfLoadsWithEverySuccess(t *testing.T) {
	ok := result{rps: 100, requests: 1000}
	tests := []struct {
		name string
		a, b result
		want string
	}{
		{"both valid", result{rps: 50, requests: 500}, ok, "0.50"},
		{"refusals seen by wrk", result{rps: 50, requests: 500, non2xx: 1}, ok, notComparable},
		{"refusals counted by the server", ok, result{rps: 50, requests: 500, serverNon2xx: 3}, notComparable},
		{"probe refused, load not run", result{failed: "403 licence_required"}, ok, notComparable},
		{"no requests", result{}, ok, notComparable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{}
			r.add("a", "a", tt.a)
			r.add("b", "b", tt.b)
			if diff := cmp.Diff(tt.want, r.ratio("a", "b")); diff != "" {
				t.Errorf("ratio (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatuses_Non2xxSinceIgnoresHangUps(t *testing.T) {
	before := statuses{"get-ai-model 200": 10, "get-ai-model 404": 1}
	after := statuses{"get-ai-model 200": 90, "get-ai-model 404": 3, "mcp 429": 4, "get-ai-model 499": 16,
		"metrics 200": 2}
	if got, want := after.non2xxSince(before), 6; got != want {
		t.Errorf("non2xxSince = %d, want %d (404 twice, 429 four times; 499 not counted)", got, want)
	}
}

func TestReport_Rounds_AddCountsAndCPUAndAverageTheRate(t *testing.T) {
	r := &report{}
	r.add("get", "GET", result{rps: 100, requests: 1000, p50: "1ms", p99: "9ms", rssKB: 50,
		cpu: cpuTimes{"server": 100 * time.Millisecond}})
	r.add("bare", "bare", result{rps: 400, requests: 4000, p50: "1ms", p99: "2ms"})
	r.add("get", "GET", result{rps: 200, requests: 2000, p50: "2ms", p99: "8ms", rssKB: 40, non2xx: 1,
		cpu: cpuTimes{"server": 200 * time.Millisecond, "wrk": time.Millisecond}})
	r.add("get", "GET", result{rps: 300, requests: 3000, p50: "3ms", p99: "7ms"})
	want := result{extra: 2, rps: 200, requests: 6000, non2xx: 1, p50: "1ms 2ms 3ms",
		p99: "9ms 8ms 7ms", rssKB: 50, cpu: cpuTimes{"server": 300 * time.Millisecond, "wrk": time.Millisecond}}
	if diff := cmp.Diff(want, r.results["get"], cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("merged rounds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"get", "bare"}, r.keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

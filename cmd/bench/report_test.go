package main

import (
	"testing"

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

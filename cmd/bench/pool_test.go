package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTokenPool_AFailedMint_IsAnErrorTheRunReturns: a token that cannot be
// minted (here: no pepper) is an error the run returns, so its deferred
// stops end the servers it started; a log.Fatal left them running.
func TestTokenPool_AFailedMint_IsAnErrorTheRunReturns(t *testing.T) {
	pool, err := tokenPool(context.Background(), config{duration: time.Second}, &world{})
	if got := pool("get", 1); !slices.Equal(got, []string{""}) {
		t.Fatalf("tokens of a failed mint: %q", got)
	}
	if e := err(); e == nil || !strings.Contains(e.Error(), "for the get load") {
		t.Fatalf("error: %v", e)
	}
	if got := pool("mcp", 2); !slices.Equal(got, []string{""}) {
		t.Fatalf("a mint after the failed one: %q", got)
	}
}

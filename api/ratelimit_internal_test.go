package api

import (
	"context"
	"testing"
)

// TestRequestCost_RESTOneToolCallGETPaidByItsPOST: a REST request costs one
// unit; a tool call's in-process GET nothing when its POST took the call's
// two units, else the second unit.
func TestRequestCost_RESTOneToolCallGETPaidByItsPOST(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want int
	}{
		{"REST", ctx, 1},
		{"tool call paid by its POST", WithMCPTool(ctx, "get-meta", true), 0},
		{"tool call its POST did not pay", WithMCPTool(ctx, "get-meta", false), 1},
	} {
		if got := requestCost(tc.ctx); got != tc.want {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.want)
		}
	}
}

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
		{"tool call paid by its POST", withCall(ctx, &Call{Operation: "get-meta", Paid: true}), 0},
		{"tool call its POST did not pay", withCall(ctx, &Call{Operation: "get-meta"}), 1},
	} {
		if got := requestCost(tc.ctx); got != tc.want {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRateDecision_Status_ResetIsWhenTheSpentUnitsHaveRefilled: the budget
// an answer shows is the decision's limit and remaining, and the seconds
// the spent units take to refill at the limit a minute, rounded up.
func TestRateDecision_Status_ResetIsWhenTheSpentUnitsHaveRefilled(t *testing.T) {
	for _, tc := range []struct {
		d    RateDecision
		want RateStatus
	}{
		{RateDecision{Limit: 600, Remaining: 600}, RateStatus{Limit: 600, Remaining: 600}},
		{RateDecision{Limit: 600, Remaining: 599}, RateStatus{600, 599, 1}},
		{RateDecision{Limit: 600, Remaining: 575}, RateStatus{600, 575, 3}},
		{RateDecision{Limit: 600, Remaining: 0}, RateStatus{Limit: 600, ResetSeconds: 60}},
		{RateDecision{Limit: 12, Remaining: 11}, RateStatus{12, 11, 5}},
		{RateDecision{}, RateStatus{}},
	} {
		if got := tc.d.Status(); got != tc.want {
			t.Errorf("%+v: %+v, want %+v", tc.d, got, tc.want)
		}
	}
}

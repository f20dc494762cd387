package bunstore_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// TestIdempotency_ClaimedKey_RecoveryPointAndAnswerWrittenWithTheChange:
// a change run under a claimed key (Begin's lease, not the first run's)
// writes its recovery point — and the answer, when the lease renders one —
// in the change's transaction through the key's prepared UPDATE; a lease
// taken over meanwhile rolls the change back.
func TestIdempotency_ClaimedKey_RecoveryPointAndAnswerWrittenWithTheChange(t *testing.T) {
	t.Parallel()
	answer := resources.StoredResponse{Status: http.StatusCreated,
		Header: map[string][]string{"Content-Type": {"application/json"}}, Body: []byte(`{"id":"1"}`)}
	tests := []struct {
		name     string
		renders  bool   // the lease renders the answer from the change's result
		token    string // the lease's token when the change runs ("": Begin's)
		wantCode string // the change's problem code ("": it succeeds)
	}{
		{name: "with the answer", renders: true},
		{name: "recovery point only"},
		{name: "lease taken over", renders: true, token: "someone-else", wantCode: resources.CodeIdempotencyLeaseLost},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := bunstore.NewStore(pgtest.DB(t))
			req := resources.IdempotencyRequest{Account: "user:1", Key: "claimed", Fingerprint: []byte{byte(i)}}
			begun, err := store.Begin(ctx, req)
			if err != nil || begun.Lease == nil || begun.Lease.ID == 0 {
				t.Fatalf("claim: %+v %v", begun, err)
			}
			lease := begun.Lease
			if tt.renders {
				lease.Answer = func(any) (resources.StoredResponse, bool) { return answer, true }
			}
			if tt.token != "" {
				lease.Token = tt.token
			}
			m, _ := resources.NewAIModel(resources.AIModelCreate{Repo: "org/claimed"})
			_, err = store.CreateAIModel(ctx, resources.Actor{Label: "t"}, m, lease)
			checkCode(t, err, tt.wantCode)
			if tt.wantCode != "" {
				page, err := store.ListAIModels(ctx, resources.AIModelFilter{}, resources.PageQuery{Limit: 1})
				if err != nil || len(page.Items) != 0 {
					t.Fatalf("the change was not rolled back: %v %+v", err, page.Items)
				}
				return
			}
			if tt.renders && (lease.Stored == nil || lease.Stored.Status != answer.Status) {
				t.Fatalf("the lease does not say the answer was kept: %+v", lease.Stored)
			}
			checkKey(t, store, req, lease, tt.renders, answer)
		})
	}
}

// checkKey reads the key back: a kept answer is replayed; otherwise the key
// is held until released, then claimed again at the change's recovery point.
func checkKey(t *testing.T, store *bunstore.Store, req resources.IdempotencyRequest, lease *resources.Lease,
	answered bool, answer resources.StoredResponse) {
	t.Helper()
	ctx := context.Background()
	if answered {
		again, err := store.Begin(ctx, req)
		if err != nil || again.Replay == nil {
			t.Fatalf("replay: %+v %v", again, err)
		}
		if d := cmp.Diff(answer, *again.Replay); d != "" {
			t.Fatalf("replayed answer (-kept +replayed):\n%s", d)
		}
		return
	}
	_, err := store.Begin(ctx, req)
	checkCode(t, err, resources.CodeIdempotencyInProgress)
	if err := store.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	again, err := store.Begin(ctx, req)
	if err != nil || again.Lease == nil || again.Lease.RecoveryPoint != resources.RecoveryAIModelCreated {
		t.Fatalf("claim after release: %+v %v", again, err)
	}
}

func checkCode(t *testing.T, err error, want string) {
	t.Helper()
	e, ok := resources.AsError(err)
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && (!ok || e.Code != want):
		t.Fatalf("error %v, want %s", err, want)
	}
}

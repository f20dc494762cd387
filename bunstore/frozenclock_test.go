package bunstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"time"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

func TestFrozenClock_DatabaseNowAndStoreClockStandStill(t *testing.T) {
	ctx := context.Background()
	db := pgtest.DB(t)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock, err := bunstore.FreezeClock(ctx, db, at)
	if err != nil {
		t.Fatal(err)
	}
	st := bunstore.NewStore(db)
	st.SetClock(clock.Now)
	u, err := st.CreateUser(ctx, "", resources.NewUser{Email: "a@example.test", DisplayName: "A", Roles: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	if !u.CreatedAt.Equal(at) || !u.UpdatedAt.Equal(at) {
		t.Fatalf("user timestamps %v %v, want %v", u.CreatedAt, u.UpdatedAt, at)
	}
	later := at.Add(48 * time.Hour)
	if err := clock.Set(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateUser(ctx, "", resources.NewUser{Email: "b@example.test", DisplayName: "B"}); err != nil {
		t.Fatal(err)
	}
	var occurred []time.Time
	if err := db.NewRaw("SELECT occurred_at FROM audit_events ORDER BY id").Scan(ctx, &occurred); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Time{at, later}, occurred); diff != "" {
		t.Fatalf("audit times (-want +got)\n%s", diff)
	}
}

package bunstore_test

import (
	"testing"
	"time"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// TestStoreClock_AnInstantAnsweredAtOnceEqualsItsLaterRead: the store
// reads its clock as PostgreSQL keeps a timestamp (microseconds), so what
// a write answers (here the API switch's updated_at) equals what a read of
// it answers later, whatever the clock's nanoseconds.
func TestStoreClock_AnInstantAnsweredAtOnceEqualsItsLaterRead(t *testing.T) {
	t.Parallel()
	st := bunstore.NewStore(pgtest.DB(t))
	m := bunstore.TokenMinter{Store: st, Pepper: resources.Pepper("test-pepper-0123456789")}
	ops := resources.NewUser{Email: "ops@example.test", DisplayName: "Ops", Roles: []string{"admin"}}
	if _, err := m.CreateUser(t.Context(), resources.Actor{}, ops); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	st.SetClock(func() time.Time { return at })
	written, err := st.SetAPIEnabled(t.Context(), resources.Actor{Label: "ops@example.test"}, true)
	if err != nil {
		t.Fatal(err)
	}
	read, err := st.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !written.UpdatedAt.Equal(read.UpdatedAt) || written.UpdatedAt.Nanosecond()%1000 != 0 {
		t.Fatalf("answered %v, read back %v", written.UpdatedAt, read.UpdatedAt)
	}
}

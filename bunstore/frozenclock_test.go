package bunstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// frozenAt is the instant the frozen-clock tests freeze the clock at.
var frozenAt = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// frozenStore is a store on a database of its own whose clock, and the
// database's, stand at instant.
func frozenStore(t *testing.T, instant time.Time) (context.Context, *bun.DB, *bunstore.FrozenClock,
	*bunstore.Store) {
	t.Helper()
	ctx, db := context.Background(), pgtest.DB(t)
	clock, err := bunstore.FreezeClock(ctx, db, instant)
	if err != nil {
		t.Fatal(err)
	}
	st := bunstore.NewStore(db)
	st.SetClock(clock.Now)
	return ctx, db, clock, st
}

func TestFrozenClock_DatabaseNowAndStoreClockStandStill(t *testing.T) {
	ctx, db, clock, st := frozenStore(t, frozenAt)
	u, err := st.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: "a@example.test", DisplayName: "A", Roles: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	if !u.CreatedAt.Equal(frozenAt) || !u.UpdatedAt.Equal(frozenAt) {
		t.Fatalf("user timestamps %v %v, want %v", u.CreatedAt, u.UpdatedAt, frozenAt)
	}
	later := frozenAt.Add(48 * time.Hour)
	if err := clock.Set(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: "b@example.test", DisplayName: "B"}); err != nil {
		t.Fatal(err)
	}
	var occurred []time.Time
	if err := db.NewRaw("SELECT occurred_at FROM audit_events ORDER BY id").Scan(ctx, &occurred); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Time{frozenAt, later}, occurred); diff != "" {
		t.Fatalf("audit times (-want +got)\n%s", diff)
	}
}

func TestThawClock_DatabaseWritesRealTimeAgainTwiceIsHarmless(t *testing.T) {
	ctx := context.Background()
	db := pgtest.DB(t)
	if _, err := bunstore.NewStore(db).CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: "a@example.test",
		DisplayName: "A"}); err != nil {
		t.Fatal(err)
	}
	touch := func() (at time.Time) {
		t.Helper()
		q := "UPDATE users SET updated_at = now() RETURNING updated_at"
		if err := db.NewRaw(q).Scan(ctx, &at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	frozen := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if _, err := bunstore.FreezeClock(ctx, db, frozen); err != nil {
		t.Fatal(err)
	}
	if got := touch(); !got.Equal(frozen) {
		t.Fatalf("frozen: now() wrote %v, want %v", got, frozen)
	}
	for range 2 {
		if err := bunstore.ThawClock(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now()
	got := touch()
	if got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Fatalf("thawed: now() wrote %v, want the real time (%v)", got, before)
	}
	var left int
	if err := db.NewRaw("SELECT count(*) FROM pg_trigger WHERE tgname = 'platformapi_frozen_clock'").
		Scan(ctx, &left); err != nil || left != 0 {
		t.Fatalf("%d frozen-clock triggers left (%v)", left, err)
	}
}

// TestFrozenClock_FinishedRelease_CreatedUpdatedFinishedAtTheFrozenInstants:
// with the clock frozen, a release operation booked at one instant and
// ended by a pipeline's report at a later one shows that later instant as
// both updated_at and finished_at (the store's clock and the database's
// trigger agree), and the first as created_at.
func TestFrozenClock_FinishedRelease_CreatedUpdatedFinishedAtTheFrozenInstants(t *testing.T) {
	ctx, db, clock, st := frozenStore(t, frozenAt)
	c, err := st.CreateCustomer(ctx, resources.Actor{Label: "a@example.test"}, resources.CustomerCreate{
		Customer: resources.Customer{ShortName: "ACME", LongName: "Acme Corporation", VCSGroup: "acme",
			PrimaryContactEmail: "ops@acme.example", PrimaryContactName: "Ops", BillingTier: "INTERNAL",
			DefaultEmailTier: 3, Edition: "sp", Status: resources.CustomerActive}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.NewRaw(`WITH p AS (
		  INSERT INTO projects (customer_id, tenant_id, status, short_name, name, kind)
		  SELECT ?, id, 'active', 'SHOP', 'Web shop', 'cluster' FROM tenants
		  WHERE customer_id = ? RETURNING id)
		INSERT INTO release_operations (project_id, kind, component, source_env, target_env,
		  version, status, requested_by, requested_via)
		SELECT id, 'promotion', 'www', 'sandbox', 'dev', '1.0.0', 'running', 'a@example.test', 'api'
		FROM p RETURNING id`, c.ID, c.ID).Scan(ctx, &id); err != nil {
		t.Fatal(err)
	}
	later := frozenAt.Add(time.Hour)
	if err := clock.Set(ctx, later); err != nil {
		t.Fatal(err)
	}
	if err := st.ReportDeploy(ctx, resources.DeployReport{ReleaseOperationID: id, By: "pipeline:1",
		Reason: "broke"}); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetReleaseOperation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := []time.Time{r.CreatedAt, r.UpdatedAt, *r.FinishedAt}
	if diff := cmp.Diff([]time.Time{frozenAt, later, later}, got); diff != "" {
		t.Fatalf("created, updated, finished (-want +got)\n%s", diff)
	}
}

package bunstore_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openEmpty(t *testing.T) *bun.DB {
	t.Helper()
	db, err := bunstore.Open(t.Context(), pgtest.EmptyDSN(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestMigrate_AppliesEverythingOnceThenIsNoOp(t *testing.T) {
	db := openEmpty(t)

	before, err := bunstore.MigrationStatus(t.Context(), db)
	if err != nil {
		t.Fatalf("MigrationStatus on empty db: %v", err)
	}
	if len(before) == 0 {
		t.Fatal("MigrationStatus lists no migrations")
	}
	var want []string
	for _, s := range before {
		if s.Applied || s.AppliedAt != nil {
			t.Errorf("before Migrate %+v is applied", s)
		}
		want = append(want, s.Name)
	}

	applied, err := bunstore.Migrate(t.Context(), db)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if strings.Join(applied, ",") != strings.Join(want, ",") {
		t.Errorf("Migrate applied %v; want %v", applied, want)
	}
	again, err := bunstore.Migrate(t.Context(), db)
	if err != nil || len(again) != 0 {
		t.Errorf("second Migrate = %v, %v; want nothing applied", again, err)
	}

	after, err := bunstore.MigrationStatus(t.Context(), db)
	if err != nil {
		t.Fatalf("MigrationStatus: %v", err)
	}
	for _, s := range after {
		if !s.Applied || s.AppliedAt == nil || s.AppliedAt.IsZero() {
			t.Errorf("after Migrate %+v; want applied with a time", s)
		}
	}
}

func TestMigrationStatus_ChangesNothing(t *testing.T) {
	db := openEmpty(t)
	if _, err := bunstore.MigrationStatus(t.Context(), db); err != nil {
		t.Fatalf("MigrationStatus: %v", err)
	}
	var exists bool
	if err := db.NewRaw("SELECT to_regclass('bun_migrations') IS NOT NULL").Scan(t.Context(), &exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("MigrationStatus created bun_migrations")
	}
}

func TestMigrate_ConcurrentCallersApplyEachMigrationOnce(t *testing.T) {
	dsn := pgtest.EmptyDSN(t)
	const callers = 4
	var wg sync.WaitGroup
	results := make([][]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		db, err := bunstore.Open(t.Context(), dsn)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer db.Close()
		wg.Go(func() { results[i], errs[i] = bunstore.Migrate(t.Context(), db) })
	}
	wg.Wait()

	total := 0
	for i := range callers {
		if errs[i] != nil {
			t.Errorf("caller %d: %v", i, errs[i])
		}
		total += len(results[i])
	}
	db := pgtest.DB(t) // a migrated database knows how many there are
	status, err := bunstore.MigrationStatus(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(status) {
		t.Errorf("callers applied %d migrations in total (%v); want %d", total, results, len(status))
	}
}

func TestMigrate_SeedsPlatformSettingsWithAPIDisabled(t *testing.T) {
	db := openEmpty(t)
	if _, err := bunstore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	var rows []bool
	if err := db.NewRaw("SELECT api_enabled FROM platform_settings").Scan(t.Context(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0] {
		t.Errorf("platform_settings api_enabled rows = %v; want exactly [false]", rows)
	}
}

func TestMigrationsFingerprint_IsStableSHA256Hex(t *testing.T) {
	fp := bunstore.MigrationsFingerprint()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(fp) {
		t.Errorf("fingerprint %q is not 64 lower-case hex digits", fp)
	}
	if again := bunstore.MigrationsFingerprint(); again != fp {
		t.Errorf("fingerprint changed between calls: %s, %s", fp, again)
	}
}

func TestMigrationState_JSONUsesSnakeCaseNames(t *testing.T) {
	b, err := json.Marshal(bunstore.MigrationState{Name: "20261122000001_foundation"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"20261122000001_foundation","applied":false,"applied_at":null}`
	if string(b) != want {
		t.Errorf("JSON = %s; want %s", b, want)
	}
}

package pgtest

import (
	"context"
	"crypto/rand"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"platformapi/bunstore"
)

func TestMain(m *testing.M) { Main(m) }

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), harness.admin)
	if err != nil {
		t.Fatalf("connect admin: %v", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	err = conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

func dbNameOf(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

func TestDSN_DatabasesAreIsolated(t *testing.T) {
	a, b := DSN(t), DSN(t)
	if dbNameOf(t, a) == dbNameOf(t, b) {
		t.Fatalf("two DSN calls returned the same database %s", dbNameOf(t, a))
	}
	dbA, err := bunstore.Open(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	defer dbA.Close()
	dbB, err := bunstore.Open(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	defer dbB.Close()

	if _, err := dbA.ExecContext(t.Context(),
		"INSERT INTO users (email, display_name) VALUES ('a@example.com', 'A')"); err != nil {
		t.Fatal(err)
	}
	var inA, inB int
	if err := dbA.NewRaw("SELECT count(*) FROM users").Scan(t.Context(), &inA); err != nil {
		t.Fatal(err)
	}
	if err := dbB.NewRaw("SELECT count(*) FROM users").Scan(t.Context(), &inB); err != nil {
		t.Fatal(err)
	}
	if inA != 1 || inB != 0 {
		t.Errorf("users rows: %d in the database written, %d in the other; want 1 and 0", inA, inB)
	}
}

func TestDB_HasMigratedSchemaAndSeedRows(t *testing.T) {
	db := DB(t)
	var rows []bool
	if err := db.NewRaw("SELECT api_enabled FROM platform_settings").Scan(t.Context(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0] {
		t.Errorf("platform_settings api_enabled rows = %v; want exactly [false]", rows)
	}
	status, err := bunstore.MigrationStatus(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status {
		if !s.Applied {
			t.Errorf("migration %s not applied", s.Name)
		}
	}
	if applied, err := bunstore.Migrate(t.Context(), db); err != nil || len(applied) != 0 {
		t.Errorf("Migrate on a pgtest database = %v, %v; want a no-op", applied, err)
	}
}

func TestEmptyDSN_HasNoSchema(t *testing.T) {
	db, err := bunstore.Open(t.Context(), EmptyDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var exists bool
	if err := db.NewRaw("SELECT to_regclass('platform_settings') IS NOT NULL").Scan(t.Context(), &exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("EmptyDSN database has platform_settings")
	}
}

func TestDSN_DropsDatabaseWhenTestEnds(t *testing.T) {
	var name string
	t.Run("owner", func(t *testing.T) {
		name = dbNameOf(t, DSN(t))
		if !databaseExists(t, name) {
			t.Fatalf("database %s does not exist during the test", name)
		}
	})
	if databaseExists(t, name) {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestDB_ParallelTestsGetTheirOwnDatabases(t *testing.T) {
	for i := range 6 {
		t.Run(strings.Repeat("x", i+1), func(t *testing.T) {
			t.Parallel()
			db := DB(t)
			if _, err := db.ExecContext(t.Context(),
				"INSERT INTO server_keys (name, value) VALUES ('k', '\\x00')"); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.NewRaw("SELECT count(*) FROM server_keys").Scan(t.Context(), &n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("server_keys has %d rows; want 1", n)
			}
		})
	}
}

func TestEnsureTemplate_ConcurrentBuildersMakeOneUsableTemplate(t *testing.T) {
	if err := setup(); err != nil {
		t.Fatal(err)
	}
	name := "pgtest_tmpl_test_" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() {
		ctx := context.Background()
		_ = adminExec(ctx, "ALTER DATABASE "+ident(name)+" WITH IS_TEMPLATE false")
		_ = adminExec(ctx, "DROP DATABASE IF EXISTS "+ident(name))
	})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = ensureTemplate(t.Context(), harness.admin, name) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("builder %d: %v", i, err)
		}
	}
	if databaseExists(t, name+"_build") {
		t.Error("the temporary build database was left behind")
	}
	db, err := bunstore.Open(t.Context(), createDB(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM platform_settings").Scan(t.Context(), &n); err != nil || n != 1 {
		t.Errorf("clone of the template: platform_settings rows = %d, %v; want 1", n, err)
	}
}

func TestDBName_IsValidLowerCaseAndUnique(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	seen := map[string]bool{}
	for _, sub := range []string{"Mixed Case/with spaces#and=symbols", strings.Repeat("Long", 40), "é"} {
		t.Run(sub, func(t *testing.T) {
			for range 3 {
				name := dbName(t)
				if !valid.MatchString(name) {
					t.Errorf("dbName = %q; not a valid lower-case identifier of at most 63 bytes", name)
				}
				if seen[name] {
					t.Errorf("dbName repeated %q", name)
				}
				seen[name] = true
			}
		})
	}
}

func TestDSNFor_PointsAtTheNamedDatabase(t *testing.T) {
	for _, admin := range []string{
		"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"postgres://postgres@/postgres?host=%2Ftmp%2Fsock+dir&port=5433&dbname=postgres",
		"host=127.0.0.1 user=postgres dbname=postgres sslmode=disable",
	} {
		cfg, err := pgx.ParseConfig(dsnFor(admin, "t_x_abc"))
		if err != nil {
			t.Errorf("dsnFor(%q): %v", admin, err)
			continue
		}
		if cfg.Database != "t_x_abc" || cfg.User != "postgres" {
			t.Errorf("dsnFor(%q) = database %q user %q; want t_x_abc as postgres", admin, cfg.Database, cfg.User)
		}
	}
}

// Package pgtest gives each test its own PostgreSQL database with the
// platformapi schema already applied.
//
// The server is the one TEST_DATABASE_URL names (a DSN for an
// administrative database, such as
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, whose user
// may create databases), or else a private embedded cluster started once per
// test binary. Test packages should stop that cluster with Main:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Each database is a copy of a template database that was migrated once.
// The template's name carries bunstore.MigrationsFingerprint, so changing a
// migration builds a new template; old templates stay on a shared server
// until dropped by hand (they are small).
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"platformapi/bunstore"
)

const (
	setupTimeout = 2 * time.Minute
	dropTimeout  = 30 * time.Second
	minShmBytes  = 1 << 30
	// templateLockKey serialises template builds across test binaries
	// (pg_advisory_lock, taken in the admin database).
	templateLockKey int64 = 0x7067746573740001
)

// harness is the state shared by the tests of one binary, set up once.
var harness struct {
	once     sync.Once
	err      error
	admin    string             // DSN of the administrative database
	template string             // name of the migrated template database
	embedded *bunstore.Embedded // nil when TEST_DATABASE_URL is used
	tempDir  string             // the embedded cluster's files
}

// Runner runs a package's tests and returns their exit code: a
// *testing.M, or a wrapper that checks more after the tests ran.
type Runner interface{ Run() int }

// Main runs the tests of m, then stops the embedded cluster (if one was
// started) and removes its files, and exits with the tests' exit code.
// Call it from TestMain.
func Main(m Runner) {
	code := m.Run()
	harness.once.Do(func() {}) // synchronise with a setup that did run
	if harness.embedded != nil {
		if err := harness.embedded.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop embedded postgres: %v\n", err)
		}
		_ = os.RemoveAll(harness.tempDir)
	}
	os.Exit(code)
}

// DSN creates a new database for this test holding the fully migrated
// schema and its seed rows, and returns its DSN. No other test sees the
// database; it is dropped when the test ends. Setup failures fail the test.
func DSN(t testing.TB) string {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return createDB(t, harness.template)
}

// EmptyDSN is like DSN but the database is empty (copied from template0):
// for tests of the migrations themselves.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return createDB(t, "template0")
}

// DB opens the database DSN creates for this test. The DB is closed, and the
// database dropped, when the test ends.
func DB(t testing.TB) *bun.DB {
	t.Helper()
	db, err := bunstore.Open(t.Context(), DSN(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// setup finds or starts the server and builds the template, once.
func setup() error {
	harness.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		harness.err = start(ctx)
	})
	return harness.err
}

func start(ctx context.Context) error {
	harness.admin = os.Getenv("TEST_DATABASE_URL")
	if harness.admin == "" {
		dir, err := os.MkdirTemp(clusterParent(), "pgtest-")
		if err != nil {
			return err
		}
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		emb, err := bunstore.StartEmbedded(ctx, dir, logger, bunstore.WithNoSync())
		if err != nil {
			_ = os.RemoveAll(dir)
			return fmt.Errorf("%w (or set TEST_DATABASE_URL to an existing server)", err)
		}
		harness.embedded, harness.tempDir, harness.admin = emb, dir, emb.DSN("postgres")
	}
	name := "pgtest_tmpl_" + bunstore.MigrationsFingerprint()[:16]
	if err := ensureTemplate(ctx, harness.admin, name); err != nil {
		return err
	}
	harness.template = name
	return nil
}

// clusterParent picks where the embedded cluster's files go: /dev/shm
// (tmpfs) when it has room, as PostgreSQL creates hundreds of files per
// CREATE DATABASE and that is many times faster in memory; else the
// default temporary directory. (Docker gives /dev/shm only 64 MiB.)
func clusterParent() string {
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Bavail*uint64(st.Bsize) >= minShmBytes {
		return "/dev/shm"
	}
	return ""
}

// ensureTemplate makes sure the migrated template database name exists on
// the server of adminDSN. Builds are serialised by an advisory lock, and a
// template is built under a temporary name and renamed once complete, so
// concurrent test binaries never see, or clone, a half-built template.
func ensureTemplate(ctx context.Context, adminDSN, name string) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to admin database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) // also releases the lock
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockKey); err != nil {
		return fmt.Errorf("lock template: %w", err)
	}
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil || exists {
		return err
	}
	building := name + "_build"
	for _, sql := range []string{
		"DROP DATABASE IF EXISTS " + ident(building) + " WITH (FORCE)", // a crashed build
		"CREATE DATABASE " + ident(building) + " TEMPLATE template0",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("build template: %w", err)
		}
	}
	if err := migrate(ctx, dsnFor(adminDSN, building)); err != nil {
		return err
	}
	// Nobody may connect to the finished template, so cloning it never
	// fails because of another session.
	for _, sql := range []string{
		"ALTER DATABASE " + ident(building) + " WITH IS_TEMPLATE true ALLOW_CONNECTIONS false",
		"ALTER DATABASE " + ident(building) + " RENAME TO " + ident(name),
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("finish template: %w", err)
		}
	}
	return nil
}

// migrate applies the migrations to the database at dsn and disconnects.
func migrate(ctx context.Context, dsn string) error {
	db, err := bunstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	_, err = bunstore.Migrate(ctx, db)
	if closeErr := db.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	return nil
}

// createDB clones template into a new database for t, dropped when t ends.
func createDB(t testing.TB, template string) string {
	t.Helper()
	name := dbName(t)
	if err := adminExec(t.Context(), "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(template)); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		if err := adminExec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return dsnFor(harness.admin, name)
}

// adminExec runs one statement in the administrative database.
func adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, harness.admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// dbName derives a unique, valid, lower-case database name from the test's
// name: "t_<test name>_<random>", at most 63 bytes.
func dbName(t testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if b.Len() == 40 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "t_" + b.String() + "_" + strings.ToLower(rand.Text()[:12])
}

// dsnFor returns adminDSN pointed at database dbname instead.
func dsnFor(adminDSN, dbname string) string {
	u, err := url.Parse(adminDSN)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return adminDSN + " dbname=" + dbname // keyword/value form: the last one wins
	}
	q := u.Query()
	q.Del("dbname")
	u.Path, u.RawPath, u.RawQuery = "/"+dbname, "", q.Encode()
	return u.String()
}

// ident quotes a database name for SQL.
func ident(name string) string {
	return pgx.Identifier{name}.Sanitize()
}

// AdminDSN is the DSN of the administrative database of the server the
// tests use (for code that creates databases of its own, such as
// `platformapi eval`). Those databases must be dropped by their creator.
func AdminDSN(t testing.TB) string {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return harness.admin
}

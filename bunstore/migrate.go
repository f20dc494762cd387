package bunstore

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"time"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// migrationFiles holds the schema migrations, named the way bun expects:
// <timestamp>_<name>.up.sql (optionally .down.sql). A file without
// "--bun:split" lines is sent to the server as one simple-protocol query,
// which PostgreSQL runs as a single implicit transaction.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrateLockKey is the pg_advisory_lock key that serialises Migrate calls
// against one database (advisory locks are scoped to the current database).
const migrateLockKey int64 = 0x706c6174666f726d // "platform"

// MigrationState is the state of one embedded migration in a database.
type MigrationState struct {
	// Name is the migration's file name without the .up.sql suffix,
	// for example "20261122000001_foundation".
	Name string `json:"name"`
	// Applied reports whether the migration has been applied.
	Applied bool `json:"applied"`
	// AppliedAt is when it was applied; nil when it has not been.
	AppliedAt *time.Time `json:"applied_at"`
}

// Migrate applies the embedded migrations that db has not applied yet, in
// name order, and returns their names (empty when the schema is current).
//
// It is safe to call from several processes at once: it holds a
// session-level pg_advisory_lock on a dedicated connection while it creates
// bun's bookkeeping tables and migrates, so a second caller waits and then
// finds nothing to do. The lock is released automatically if the process
// dies. A migration is recorded as applied only after it succeeded. db must
// allow at least two open connections.
func Migrate(ctx context.Context, db *bun.DB) (applied []string, err error) {
	migrations, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	unlock, err := lockMigrations(ctx, db)
	if err != nil {
		return nil, err
	}
	defer unlock()

	migrator := migrate.NewMigrator(db, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return nil, fmt.Errorf("bunstore: create migration tables: %w", err)
	}
	group, err := migrator.Migrate(ctx)
	done := group.Migrations
	if err != nil && len(done) > 0 {
		done = done[:len(done)-1] // the one that failed
	}
	for _, m := range done {
		applied = append(applied, m.String())
	}
	if err != nil {
		return applied, fmt.Errorf("bunstore: migrate: %w", err)
	}
	river, err := migrateRiver(ctx, db)
	return append(applied, river...), err
}

// riverSchema names the River job-queue schema version the embedded River
// migrations create; it is part of MigrationsFingerprint.
const riverSchema = "river v0.41.0"

// migrateRiver applies River's own migrations (its job tables), named
// "river_<version>" in the result.
func migrateRiver(ctx context.Context, db *bun.DB) ([]string, error) {
	m, err := rivermigrate.New(riverdatabasesql.New(db.DB), nil)
	if err != nil {
		return nil, fmt.Errorf("bunstore: river migrations: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("bunstore: river migrations: %w", err)
	}
	var names []string
	for _, v := range res.Versions {
		names = append(names, fmt.Sprintf("river_%03d", v.Version))
	}
	return names, nil
}

// riverStatus lists River's migrations with whether and when each was
// applied (from River's own river_migration table).
func riverStatus(ctx context.Context, db *bun.DB) ([]MigrationState, error) {
	m, err := rivermigrate.New(riverdatabasesql.New(db.DB), nil)
	if err != nil {
		return nil, err
	}
	var exists bool
	if err := db.NewRaw("SELECT to_regclass('river_migration') IS NOT NULL").Scan(ctx, &exists); err != nil {
		return nil, err
	}
	applied := map[int]time.Time{}
	if exists {
		var rows []struct {
			Version   int       `bun:"version"`
			CreatedAt time.Time `bun:"created_at"`
		}
		if err := db.NewRaw("SELECT version, created_at FROM river_migration WHERE line = 'main'").Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("bunstore: river migration status: %w", err)
		}
		for _, r := range rows {
			applied[r.Version] = r.CreatedAt
		}
	}
	var out []MigrationState
	for _, v := range m.AllVersions() {
		st := MigrationState{Name: fmt.Sprintf("river_%03d", v.Version)}
		if at, ok := applied[v.Version]; ok {
			st.Applied, st.AppliedAt = true, &at
		}
		out = append(out, st)
	}
	return out, nil
}

// lockMigrations takes the migration advisory lock on a dedicated
// connection, waiting for other holders. The returned func releases it.
func lockMigrations(ctx context.Context, db *bun.DB) (unlock func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("bunstore: migration lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrateLockKey); err != nil {
		discard(conn)
		return nil, fmt.Errorf("bunstore: wait for migration lock: %w", err)
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", migrateLockKey); err != nil {
			// Never return a session that may still hold the lock to the pool.
			discard(conn)
			return
		}
		_ = conn.Close()
	}, nil
}

// discard closes conn's underlying connection instead of pooling it.
func discard(conn bun.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// MigrationStatus lists every embedded migration in name order with whether
// db has applied it. It changes nothing in the database; on a database that
// was never migrated every entry is unapplied.
func MigrationStatus(ctx context.Context, db *bun.DB) ([]MigrationState, error) {
	migrations, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	var initialised bool
	err = db.NewRaw("SELECT to_regclass('bun_migrations') IS NOT NULL").Scan(ctx, &initialised)
	if err != nil {
		return nil, fmt.Errorf("bunstore: migration status: %w", err)
	}
	sorted := migrations.Sorted()
	if initialised {
		migrator := migrate.NewMigrator(db, migrations)
		if sorted, err = migrator.MigrationsWithStatus(ctx); err != nil {
			return nil, fmt.Errorf("bunstore: migration status: %w", err)
		}
	}
	states := make([]MigrationState, 0, len(sorted))
	for _, m := range sorted {
		state := MigrationState{Name: m.String(), Applied: m.IsApplied()}
		if state.Applied {
			at := m.MigratedAt
			state.AppliedAt = &at
		}
		states = append(states, state)
	}
	river, err := riverStatus(ctx, db)
	return append(states, river...), err
}

// MigrationsFingerprint returns a hex SHA-256 digest of the names and
// contents of the embedded migration files. It changes whenever a migration
// is added, removed or edited, so it can name artefacts built from the
// schema (such as test template databases).
func MigrationsFingerprint() string {
	h := sha256.New()
	h.Write([]byte(riverSchema))
	// WalkDir visits files in lexical order, so the digest is stable.
	err := fs.WalkDir(migrationFiles, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := migrationFiles.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("bunstore: read embedded migrations: %v", err)) // cannot happen with embed.FS
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loadMigrations discovers the embedded migration files.
func loadMigrations() (*migrate.Migrations, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("bunstore: migrations: %w", err)
	}
	migrations := migrate.NewMigrations()
	if err := migrations.Discover(sub); err != nil {
		return nil, fmt.Errorf("bunstore: discover migrations: %w", err)
	}
	return migrations, nil
}

// Package bunstore owns the PostgreSQL connection of platformapi: opening a
// bun.DB, applying the embedded schema migrations and, when no external
// database is configured, running a private PostgreSQL cluster.
package bunstore

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Pool settings. The pool is sized to the CPUs the process may use; idle
// connections are kept (database/sql keeps only 2 by default, which makes a
// busy server reconnect constantly) but recycled so that server-side memory
// and DNS changes are picked up.
const (
	connsPerProc    = 4
	minOpenConns    = 8
	connMaxLifetime = 30 * time.Minute
	connMaxIdleTime = 5 * time.Minute
)

// queryExecMode is how pgx sends a query unless the DSN names another
// (default_query_exec_mode=…). Bun writes arguments into the SQL text, so
// nearly every statement text is new: pgx's default (prepare, cache, evict,
// deallocate per distinct text) spends a round trip and a server-side
// prepared statement on each. The simple protocol sends the finished text
// in one Query message: one round trip, nothing prepared, nothing to evict
// (pgx interpolates the few real parameters, River's, itself). Hot reads
// that take real parameters prepare explicitly (hotRow).
// docs/decisions.md has the measurements behind the choice.
const queryExecMode = pgx.QueryExecModeSimpleProtocol

// Open connects to the PostgreSQL database named by dsn (a URL such as
// postgres://user:pw@host:5432/db?sslmode=disable or a keyword/value string)
// through database/sql and the pgx driver, and returns a bun.DB using the
// PostgreSQL dialect. It pings the server with ctx before returning, so a
// nil error means the database was reachable. Errors never contain the
// DSN's password. The caller must Close the returned DB.
func Open(ctx context.Context, dsn string, opts ...OpenOption) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgconn redacts the password in its parse errors.
		return nil, fmt.Errorf("bunstore: parse database DSN: %w", err)
	}
	for _, o := range opts {
		o(cfg)
	}
	target := describe(cfg)
	if !strings.Contains(dsn, "default_query_exec_mode") {
		cfg.DefaultQueryExecMode = queryExecMode
	}

	sqldb := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(fastJSONDecode))
	maxOpen := max(connsPerProc*runtime.GOMAXPROCS(0), minOpenConns)
	sqldb.SetMaxOpenConns(maxOpen)
	sqldb.SetMaxIdleConns(maxOpen)
	sqldb.SetConnMaxLifetime(connMaxLifetime)
	sqldb.SetConnMaxIdleTime(connMaxIdleTime)

	if err := sqldb.PingContext(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("bunstore: connect to %s: %w", target, err)
	}
	// A column this release does not know is a newer release's: during a
	// rolling update the newer one migrates first while this one serves on.
	return bun.NewDB(sqldb, pgdialect.New(), bun.WithDiscardUnknownColumns()), nil
}

// fastJSONDecode makes conn decode json and jsonb columns scanned through
// pgx itself (the hot read, bunstore.hotRow) with github.com/goccy/go-json,
// as the API encodes its answers; the values are the database's own JSON.
// Encoding arguments stays with encoding/json; what goes through
// database/sql is decoded by Bun.
func fastJSONDecode(_ context.Context, conn *pgx.Conn) error {
	m := conn.TypeMap()
	m.RegisterType(&pgtype.Type{Name: "json", OID: pgtype.JSONOID,
		Codec: &pgtype.JSONCodec{Marshal: json.Marshal, Unmarshal: gojson.Unmarshal}})
	m.RegisterType(&pgtype.Type{Name: "jsonb", OID: pgtype.JSONBOID,
		Codec: &pgtype.JSONBCodec{Marshal: json.Marshal, Unmarshal: gojson.Unmarshal}})
	return nil
}

// describe names the connection target for error messages, without the
// password.
func describe(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("database %q as user %q on %s:%d",
		cfg.Database, cfg.User, cfg.Host, cfg.Port)
}

// OpenOption adjusts the connections Open makes.
type OpenOption func(*pgx.ConnConfig)

// WithStatementTimeout makes PostgreSQL cancel any statement of these
// connections running longer than d (its statement_timeout; a lock wait
// counts). The error is SQLSTATE 57014, which the API answers as 503
// unavailable. d <= 0 leaves the server's setting.
func WithStatementTimeout(d time.Duration) OpenOption {
	return func(cfg *pgx.ConnConfig) {
		if d > 0 {
			cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(d.Milliseconds(), 1), 10)
		}
	}
}

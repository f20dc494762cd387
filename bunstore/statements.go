package bunstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// A statement is SQL with real parameters ($1, …) that every change runs
// (its audit event, its Idempotency-Key). Bun writes arguments into the
// SQL text, so PostgreSQL parses and plans each of Bun's statements
// afresh; a statement runs as one pgx prepares once per connection and
// keeps in its cache (pgx.QueryExecModeCacheStatement), so each use is a
// bind and an execute. On a keyed POST, parsing and planning these two had
// been about a third of PostgreSQL's CPU (docs/benchmarks.md, "Prepared
// audit and key writes"). A statement runs on the database/sql handle under
// Bun's (the transaction's own) and is reported to the store's query hook
// as Bun's statements are, so tracing sees it alike.
type statement string

// querier is what a statement needs of a database/sql handle.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sqlHandle is the database/sql handle under the Bun handle db.
func sqlHandle(db bun.IDB) (querier, error) {
	switch d := db.(type) {
	case bun.Tx:
		return d.Tx, nil
	case *bun.Tx:
		return d.Tx, nil
	case *bun.DB:
		return d.DB, nil
	case bun.Conn:
		return d.Conn, nil
	}
	return nil, fmt.Errorf("bunstore: no database/sql handle under %T", db)
}

// scan runs st on db with args and scans its one row into dest (none: st
// returns no row).
func (s *Store) scan(ctx context.Context, db bun.IDB, st statement, dest []any, args ...any) error {
	q, err := sqlHandle(db)
	if err != nil {
		return err
	}
	args = append([]any{pgx.QueryExecModeCacheStatement}, args...)
	return s.observed(ctx, string(st), func(ctx context.Context) error {
		if len(dest) == 0 {
			_, err := q.ExecContext(ctx, string(st), args...)
			return err
		}
		return q.QueryRowContext(ctx, string(st), args...).Scan(dest...)
	})
}

// observed runs send, which sends query past Bun, reported to the store's
// query hook as Bun reports its own statements: one SQL span each when
// tracing is on, whichever road the statement took.
func (s *Store) observed(ctx context.Context, query string, send func(context.Context) error) error {
	if s.hook == nil {
		return send(ctx)
	}
	event := &bun.QueryEvent{DB: s.db, Query: query, QueryTemplate: query, StartTime: time.Now()}
	ctx = s.hook.BeforeQuery(ctx, event)
	event.Err = send(ctx)
	s.hook.AfterQuery(ctx, event)
	return event.Err
}

// placeholders is "$from, $from+1, …" for n parameters.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(from+i))
	}
	return b.String()
}

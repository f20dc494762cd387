package bunstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// hotRow reads one row of the Bun model T by a query Bun built, through
// pgx directly on a connection of Bun's pool (database/sql's Conn.Raw).
// Bun still owns the model: the query text and the column to field mapping
// come from its table metadata. What is skipped is the per-query machinery
// between Bun and pgx: database/sql's rows (a goroutine watching the
// context, driver value conversion for every column) and Bun's reflective
// scan through it. On the hottest read (GET /ai/models/{id}: 36 columns)
// that machinery cost more CPU and allocation than pgx's own work
// (docs/benchmarks.md). query takes real parameters ($1, …) and runs as a
// statement pgx prepares once per connection and keeps in its cache.
type hotRow[T any] struct {
	query  string
	fields map[string][]int // column name → index path of its field in T
}

// newHotRow prepares the read of one T by query; T must be a Bun model.
func newHotRow[T any](query string) *hotRow[T] {
	table := pgdialect.New().Tables().Get(reflect.TypeFor[T]())
	return &hotRow[T]{query: query, fields: fieldIndexes(table)}
}

// fieldIndexes maps every column of table, scan-only ones included, to its
// field.
func fieldIndexes(table *schema.Table) map[string][]int {
	out := make(map[string][]int, len(table.FieldMap))
	for name, f := range table.FieldMap {
		out[name] = f.Index
	}
	return out
}

// get reads the first row of the query with args; sql.ErrNoRows when there
// is none.
func (h *hotRow[T]) get(ctx context.Context, db *sql.DB, args ...any) (*T, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	row := new(T)
	err = conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("bunstore: driver connection is %T, not pgx", driverConn)
		}
		return h.scan(ctx, c.Conn(), row, args)
	})
	if err != nil {
		return nil, err
	}
	return row, nil
}

// scan runs the query on conn and scans its first row into row.
func (h *hotRow[T]) scan(ctx context.Context, conn *pgx.Conn, row *T, args []any) error {
	rows, err := conn.Query(ctx, h.query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		return cmp.Or(rows.Err(), sql.ErrNoRows)
	}
	targets, err := h.targets(reflect.ValueOf(row).Elem(), rows.FieldDescriptions())
	if err != nil {
		return err
	}
	if err := rows.Scan(targets...); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

var rawMessagePtr = reflect.TypeFor[*json.RawMessage]()

// targets are the addresses of row's fields in the order of the columns.
func (h *hotRow[T]) targets(row reflect.Value, cols []pgconn.FieldDescription) ([]any, error) {
	out := make([]any, len(cols))
	for i, c := range cols {
		index, ok := h.fields[c.Name]
		if !ok {
			return nil, fmt.Errorf("bunstore: %T has no field for column %q", row.Interface(), c.Name)
		}
		p := row.FieldByIndex(index).Addr()
		if p.Type() == rawMessagePtr { // its bytes as they are, not decoded
			out[i] = (*[]byte)(p.Interface().(*json.RawMessage))
			continue
		}
		out[i] = p.Interface()
	}
	return out, nil
}

package bunstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
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
	plans  sync.Map         // *pgx.Conn → *hotPlan, at most maxHotPlans
	count  atomic.Int32     // entries in plans
}

// hotPlan is how one connection decodes the query's columns: each
// column's field and pgx's scan plan for it, made on the connection's first
// read. The rows of a Query plan every column again; on a row of 36
// columns that was 3 % of a GET's CPU and about a seventh of its
// allocations.
type hotPlan struct {
	oids   []uint32 // the column types the plans are for
	fields [][]int
	plans  []pgtype.ScanPlan
}

// maxHotPlans bounds the plans kept: more than a pool's connections over
// time (database/sql replaces connections), the map is emptied and refills.
const maxHotPlans = 256

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
	for try := 1; ; try++ {
		err = conn.Raw(func(driverConn any) error {
			c, ok := driverConn.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("bunstore: driver connection is %T, not pgx", driverConn)
			}
			return h.scan(ctx, c.Conn(), row, args)
		})
		if try > 1 || !stalePlan(err) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return row, nil
}

// stalePlan reports whether err is PostgreSQL refusing a prepared statement
// whose result columns changed since it was prepared (a newer release
// added a column: "cached plan must not change result type"). pgx drops the
// statement from its cache on that error, so the read is tried once again.
func stalePlan(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "0A000" &&
		strings.Contains(pgErr.Message, "cached plan must not change result type")
}

// scan runs the query on conn and decodes its first row into row.
func (h *hotRow[T]) scan(ctx context.Context, conn *pgx.Conn, row *T, args []any) error {
	rows, err := conn.Query(ctx, h.query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		return cmp.Or(rows.Err(), sql.ErrNoRows)
	}
	cols := rows.FieldDescriptions()
	p, err := h.planFor(conn, cols)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(row).Elem()
	for i, raw := range rows.RawValues() {
		if p.plans[i] == nil {
			continue // a column T has no field for
		}
		if err := p.plans[i].Scan(raw, target(v, p.fields[i])); err != nil {
			return fmt.Errorf("bunstore: column %s: %w", cols[i].Name, err)
		}
	}
	rows.Close()
	return rows.Err()
}

// planFor returns conn's plan for the columns cols, making it when conn
// has none or the column types changed.
func (h *hotRow[T]) planFor(conn *pgx.Conn, cols []pgconn.FieldDescription) (*hotPlan, error) {
	if p, ok := h.plans.Load(conn); ok && p.(*hotPlan).fits(cols) {
		return p.(*hotPlan), nil
	}
	p := &hotPlan{oids: make([]uint32, len(cols)), fields: make([][]int, len(cols)),
		plans: make([]pgtype.ScanPlan, len(cols))}
	zero := reflect.New(reflect.TypeFor[T]()).Elem()
	for i, c := range cols {
		p.oids[i] = c.DataTypeOID
		index, ok := h.fields[c.Name]
		if !ok {
			continue // a newer release's column: not read (as Bun's WithDiscardUnknownColumns)
		}
		p.fields[i] = index
		p.plans[i] = conn.TypeMap().PlanScan(c.DataTypeOID, c.Format, target(zero, index))
	}
	if _, replaced := h.plans.Swap(conn, p); !replaced && h.count.Add(1) > maxHotPlans {
		h.plans.Clear() // connections long closed; the live ones make theirs again
		h.plans.Store(conn, p)
		h.count.Store(1)
	}
	return p, nil
}

// fits reports whether p was made for columns of the types of cols.
func (p *hotPlan) fits(cols []pgconn.FieldDescription) bool {
	if len(cols) != len(p.oids) {
		return false
	}
	for i, c := range cols {
		if c.DataTypeOID != p.oids[i] {
			return false
		}
	}
	return true
}

var rawMessagePtr = reflect.TypeFor[*json.RawMessage]()

// target is the address of row's field at index, as a scan destination: a
// json.RawMessage field takes the column's bytes as they are (not decoded).
func target(row reflect.Value, index []int) any {
	p := row.FieldByIndex(index).Addr()
	if p.Type() == rawMessagePtr {
		return (*[]byte)(p.Interface().(*json.RawMessage))
	}
	return p.Interface()
}

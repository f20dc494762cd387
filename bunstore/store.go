package bunstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"platformapi/resources"
	"platformapi/resources/tracing"
)

// Store implements the resources services over PostgreSQL. Every change runs
// in one transaction together with its audit event.
type Store struct {
	db      *bun.DB
	now     func() time.Time
	jobs    jobs
	changes resources.ChangePublisher // nil: no replica caches credentials
	tracing *tracing.Tracing          // nil: off (SetTracing)
	hook    bun.QueryHook             // the SQL spans' hook when tracing is on (see statement)
}

// NewStore wraps an open, migrated database.
func NewStore(db *bun.DB) *Store { return &Store{db: db, now: storedPrecision(time.Now)} }

// storedPrecision is the clock now read as PostgreSQL keeps a timestamp
// (UTC, microseconds), so an instant the store writes and answers at once
// equals what a read of it answers later.
func storedPrecision(now func() time.Time) func() time.Time {
	return func() time.Time { return now().UTC().Truncate(time.Microsecond) }
}

// DB exposes the underlying handle (for wiring and tests).
func (s *Store) DB() *bun.DB { return s.db }

// inTx runs fn in one read-committed transaction, committed when fn succeeds.
func (s *Store) inTx(ctx context.Context, fn func(tx bun.Tx) error) error {
	return s.inTxWith(ctx, &sql.TxOptions{}, fn)
}

// inSnapshot runs fn in one read-only repeatable-read transaction: every
// statement of fn reads the same committed state (a read made of several
// statements that must agree with each other).
func (s *Store) inSnapshot(ctx context.Context, fn func(tx bun.Tx) error) error {
	return s.inTxWith(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, fn)
}

// inTxWith runs fn in one transaction with opts, committed when fn succeeds.
func (s *Store) inTxWith(ctx context.Context, opts *sql.TxOptions, fn func(tx bun.Tx) error) error {
	for attempt := 1; ; attempt++ {
		began := false
		err := s.db.RunInTx(ctx, opts, func(ctx context.Context, tx bun.Tx) error {
			began = true
			return fn(tx)
		})
		if began || !retryBegin(ctx, err, attempt) {
			return err
		}
	}
}

// maxBeginAttempts bounds how often inTx tries BEGIN (each try is
// database/sql's own three).
const maxBeginAttempts = 8

// retryBegin reports whether a transaction whose BEGIN failed with err is
// tried again: when database/sql gave up on bad connections
// (driver.ErrBadConn) while the request is still live. database/sql tries
// two pooled connections and then "a new one", which with the pool at its
// limit is the next connection another request returns. When clients hang
// up, their connections come back closed several at once, and the bench
// saw other requests' BEGIN fail that way, answered 503 and logged as
// faults (8 times in about 1,200 requests cut by wrk's hang-ups; none in
// 753 with this retry). Nothing has happened when BEGIN fails, so a retry
// is safe; each retry discards the bad connections it met.
func retryBegin(ctx context.Context, err error, attempt int) bool {
	return errors.Is(err, driver.ErrBadConn) && ctx.Err() == nil && attempt < maxBeginAttempts
}

// auditEntry is what a change records about itself.
type auditEntry struct {
	actor      resources.Actor
	action     string
	entityType string
	entityID   string
	before     any
	after      any
}

// auditRow is the bun model of audit_events.
type auditRow struct {
	bun.BaseModel `bun:"table:audit_events"`
	ID            int64           `bun:"id,pk,autoincrement"`
	OccurredAt    time.Time       `bun:"occurred_at,nullzero,default:clock_timestamp()"`
	Actor         string          `bun:"actor"`
	Action        string          `bun:"action"`
	EntityType    string          `bun:"entity_type"`
	EntityID      *string         `bun:"entity_id"`
	AuthKind      *string         `bun:"auth_kind"`
	TokenID       *string         `bun:"token_id"`
	RequestID     *string         `bun:"request_id"`
	SourceIP      *string         `bun:"source_ip"`
	BeforeState   json.RawMessage `bun:"before_state,type:jsonb,nullzero"`
	AfterState    json.RawMessage `bun:"after_state,type:jsonb,nullzero"`
}

// writeAudit inserts the audit event of a change inside its transaction, with
// every secret-looking member of the states nulled.
func (s *Store) writeAudit(ctx context.Context, tx bun.IDB, e auditEntry) error {
	row, err := e.row()
	if err != nil {
		return err
	}
	return s.scan(ctx, tx, auditInsert, nil, row.args()...)
}

// auditColumns are the columns an audit event is written with (its id and
// occurred_at are the table's defaults), in the order of auditRow.args.
const auditColumns = "actor, action, entity_type, entity_id, auth_kind, token_id, " +
	"request_id, source_ip, before_state, after_state"

// auditValues is the INSERT of an audit event taking its values from
// parameter $from on.
func auditValues(from int) string {
	return "INSERT INTO audit_events (" + auditColumns + ") VALUES (" + placeholders(from, 10) + ")"
}

var auditInsert = statement(auditValues(1))

// args are the row's values in the order of auditColumns.
func (r *auditRow) args() []any {
	return []any{r.Actor, r.Action, r.EntityType, r.EntityID, r.AuthKind, r.TokenID, r.RequestID,
		r.SourceIP, jsonParam(r.BeforeState), jsonParam(r.AfterState)}
}

// jsonParam is a JSON value as a parameter: NULL when empty.
func jsonParam(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// row is the audit row of the entry.
func (e auditEntry) row() (*auditRow, error) {
	before, err := resources.AuditState(e.before)
	if err != nil {
		return nil, err
	}
	after, err := resources.AuditState(e.after)
	if err != nil {
		return nil, err
	}
	return &auditRow{Actor: e.actor.Label, Action: e.action, EntityType: e.entityType,
		EntityID: nonEmpty(e.entityID), AuthKind: nonEmpty(e.actor.AuthKind), TokenID: nonEmpty(e.actor.TokenID),
		RequestID: nonEmpty(e.actor.RequestID), SourceIP: nonEmpty(e.actor.SourceIP),
		BeforeState: before, AfterState: after}, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// scanPage runs sel for one keyset page (limit+1 rows, to know whether more
// follow), converts the rows and sets the next key from the last item.
func scanPage[R, T any](ctx context.Context, sel *bun.SelectQuery, limit int, conv func(R) T, key func(T) []string) (resources.Page[T], error) {
	var rows []R
	if err := sel.Limit(int64(limit+1)).Scan(ctx, &rows); err != nil {
		return resources.Page[T]{}, err
	}
	out := make([]T, 0, min(len(rows), limit))
	keys := make([][]string, 0, cap(out))
	for _, r := range rows[:min(len(rows), limit)] {
		out = append(out, conv(r))
		keys = append(keys, key(out[len(out)-1]))
	}
	if len(rows) <= limit {
		return resources.Page[T]{Items: out, Keys: keys}, nil
	}
	return resources.Page[T]{Items: out, Keys: keys, Next: keys[len(keys)-1]}, nil
}

// byID orders sel by id and starts it after the page key (an id), if any.
func byID(sel *bun.SelectQuery, after []string) (*bun.SelectQuery, error) {
	sel.OrderExpr("id")
	if after == nil {
		return sel, nil
	}
	if len(after) != 1 {
		return nil, errBadKey
	}
	id, err := strconv.ParseInt(after[0], 10, 64)
	if err != nil {
		return nil, errBadKey
	}
	return sel.Where("id > ?", id), nil
}

// idKey is the page key of a row ordered by id.
func idKey(id int64) []string { return []string{idString(id)} }

var errBadKey = &resources.Error{Kind: resources.KindBadRequest, Code: resources.CodeInvalidCursor,
	Field: "cursor", Detail: "the cursor does not fit this list"}

// uniqueViolation reports whether err broke the named unique constraint.
func uniqueViolation(err error, constraint string) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505" && pg.ConstraintName == constraint
}

// noRows reports whether err says the query found nothing.
func noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func idString(id int64) string { return strconv.FormatInt(id, 10) }

// checkViolation reports whether err broke a CHECK constraint.
func checkViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23514"
}

// SetChangePublisher makes the store tell every replica, after commit, about
// changes to tokens, people's roles and status, and the API switch.
func (s *Store) SetChangePublisher(p resources.ChangePublisher) { s.changes = p }

// published publishes changes when err is nil (the change committed) and
// returns err.
func (s *Store) published(ctx context.Context, err error, changes ...resources.Change) error {
	if err != nil || s.changes == nil {
		return err
	}
	for _, c := range changes {
		s.changes.Publish(context.WithoutCancel(ctx), c)
	}
	return nil
}

// SetClock replaces the store's clock (tests move time forward with it),
// read at the stored precision.
func (s *Store) SetClock(now func() time.Time) { s.now = storedPrecision(now) }

// lockNotAvailable reports whether a NOWAIT row lock was refused.
func lockNotAvailable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "55P03"
}

// updateRow writes every column of a model by primary key, setting
// updated_at to the transaction's time (the clock created_at uses) and
// reading it back into the model.
func updateRow(ctx context.Context, tx bun.IDB, model any) error {
	_, err := tx.NewUpdate().Model(model).Value("updated_at", "now()").WherePK().Returning("updated_at").Exec(ctx)
	return err
}

// createdID is what a create records as its recovery point: the new row's id.
type createdID struct{ ID int64 }

// resumedID returns the id a keyed create already committed, when the lease
// resumes past point; ok is false for a fresh attempt.
func resumedID(l *resources.Lease, point string) (id int64, ok bool, err error) {
	if !l.Resumed(point) {
		return 0, false, nil
	}
	var done createdID
	err = json.Unmarshal(l.RecoveryData, &done)
	return done.ID, err == nil, err
}

// resumeCreate returns the row a resumed keyed create committed earlier.
func resumeCreate[T any](ctx context.Context, id int64, err error, get func(context.Context, int64) (*T, error)) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	got, err := get(ctx, id)
	if err != nil {
		return zero, err
	}
	return *got, nil
}

// rowByID reads the row with that id into a new R, optionally under a row
// lock ("UPDATE", "UPDATE NOWAIT", "SHARE"): missing when there is none,
// 409 conflict when a NOWAIT lock is held by a concurrent change.
func rowByID[R any](ctx context.Context, db bun.IDB, id int64, lock string, missing error,
	columns ...string) (*R, error) {
	row := new(R)
	sel := db.NewSelect().Model(row).Where("id = ?", id)
	for _, c := range columns {
		sel.ColumnExpr(c)
	}
	if lock != "" {
		sel.For(lock)
	}
	if err := sel.Scan(ctx); err != nil {
		if noRows(err) {
			return nil, missing
		}
		if lockNotAvailable(err) {
			return nil, resources.Errorf(resources.KindConflict, resources.CodeConflict, "the resource is being changed; retry")
		}
		return nil, err
	}
	return row, nil
}

// whereIn keeps the rows whose column holds any one of values; no values
// keep every row.
func whereIn(sel *bun.SelectQuery, column string, values []string) {
	if len(values) > 0 {
		sel.Where("? IN (?)", bun.Ident(column), bun.In(values))
	}
}

// whereAnyOf keeps the rows meeting the condition of any one of values
// (conditions holds each value's SQL, with ?0 for arg); no values keep
// every row. A value without a condition matches nothing.
func whereAnyOf(sel *bun.SelectQuery, values []string, conditions map[string]string, arg any) {
	if len(values) == 0 {
		return
	}
	sel.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		q.Where("false")
		for _, v := range values {
			if c, ok := conditions[v]; ok && strings.Contains(c, "?0") {
				q.WhereOr(c, arg)
			} else if ok {
				q.WhereOr(c)
			}
		}
		return q
	})
}

// parseKey reads a decimal id.
func parseKey(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// timeIDKey reads a (time, id) keyset key.
func timeIDKey(after []string) (time.Time, int64, error) {
	if len(after) != 2 {
		return time.Time{}, 0, errBadKey
	}
	at, err := time.Parse(time.RFC3339Nano, after[0])
	if err != nil {
		return time.Time{}, 0, err
	}
	id, err := strconv.ParseInt(after[1], 10, 64)
	return at, id, err
}

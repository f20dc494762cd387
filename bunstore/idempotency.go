package bunstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// idempotencyRow is the bun model of idempotency_keys.
type idempotencyRow struct {
	bun.BaseModel  `bun:"table:idempotency_keys"`
	ID             int64               `bun:"id,pk,autoincrement"`
	Account        string              `bun:"account"`
	Key            string              `bun:"key"`
	Fingerprint    []byte              `bun:"fingerprint"`
	CreatedAt      time.Time           `bun:"created_at"`
	Lease          *string             `bun:"lease"`
	LockedUntil    *time.Time          `bun:"locked_until"`
	RecoveryPoint  string              `bun:"recovery_point,nullzero,default:'started'"`
	RecoveryData   json.RawMessage     `bun:"recovery_data,type:jsonb,nullzero"`
	ResponseStatus *int                `bun:"response_status"`
	ResponseHeader map[string][]string `bun:"response_header,type:jsonb"`
	ResponseBody   []byte              `bun:"response_body"`
	FinishedAt     *time.Time          `bun:"finished_at"`
}

// Begin implements resources.Idempotency. A new key (or one whose earlier
// attempt lost its lease without an answer) is claimed by one statement: one
// round trip and one autocommit, nothing held open. Only when the claim
// finds the key taken does a second read decide: replay a finished answer,
// 409 for another request, 429 while it runs; a key older than the window
// is deleted and claimed afresh.
func (s *Store) Begin(ctx context.Context, r resources.IdempotencyRequest) (resources.Begun, error) {
	for range 3 { // the key can change hands between the claim and the read
		now := s.now().UTC()
		lease, err := s.claimKey(ctx, r, now)
		if err != nil || lease != nil {
			return resources.Begun{Lease: lease}, err
		}
		begun, retry, err := s.takenKey(ctx, r, now)
		if err != nil || !retry {
			return begun, err
		}
	}
	return resources.Begun{}, inProgress()
}

// inProgress is the 429 of a key whose request still runs; the retry can
// come soon (the first request usually ends in milliseconds).
func inProgress() *resources.Error {
	e := resources.Errorf(resources.KindTooManyRequests, resources.CodeIdempotencyInProgress,
		"a request with this Idempotency-Key is still running; "+
			"retry after "+resources.RetryAfterWords)
	e.RetryAfter = resources.IdempotencyRetryAfter
	return e
}

// claimSQL inserts a new key with a lease, or leases an existing one of the
// same request that has no answer and no live lease (a crash or a 5xx);
// it returns nothing when the key is taken otherwise. Its commit does not
// wait for the WAL flush (synchronous_commit off for this statement's
// transaction only): a claim lost in a crash leaves the key free, which
// is right as long as nothing was done under it, and anything done under
// it is the business transaction, whose own (synchronous) commit flushes
// the WAL past the claim. A keyed request thus waits for one flush, as an
// unkeyed one does.
const claimSQL = `INSERT INTO idempotency_keys AS k (account, key, fingerprint, created_at, lease, locked_until)
	SELECT ?0, ?1, ?2, ?3, ?4, ?5 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
	ON CONFLICT (account, key) DO UPDATE SET lease = EXCLUDED.lease, locked_until = EXCLUDED.locked_until
	WHERE k.fingerprint = EXCLUDED.fingerprint AND k.response_status IS NULL AND k.created_at >= ?6
	  AND (k.lease IS NULL OR k.locked_until <= ?3)
	RETURNING k.id, k.recovery_point, k.recovery_data`

func (s *Store) claimKey(ctx context.Context, r resources.IdempotencyRequest, now time.Time) (*resources.Lease, error) {
	token := rand.Text()
	var row idempotencyRow
	err := s.db.NewRaw(claimSQL, r.Account, r.Key, r.Fingerprint, now, token, now.Add(resources.IdempotencyLeaseTTL),
		now.Add(-resources.IdempotencyWindow)).Scan(ctx, &row.ID, &row.RecoveryPoint, &row.RecoveryData)
	if noRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &resources.Lease{ID: row.ID, Token: token, RecoveryPoint: row.RecoveryPoint,
		RecoveryData: row.RecoveryData}, nil
}

// takenKey reads a key the claim could not take and decides; retry means
// the claim may succeed now (the key expired and was deleted, or it was
// released or its lease ran out meanwhile).
func (s *Store) takenKey(ctx context.Context, r resources.IdempotencyRequest,
	now time.Time) (resources.Begun, bool, error) {
	row := &idempotencyRow{}
	err := s.db.NewSelect().Model(row).Where("account = ? AND key = ?", r.Account, r.Key).Scan(ctx)
	switch {
	case noRows(err):
		return resources.Begun{}, true, nil
	case err != nil:
		return resources.Begun{}, false, err
	case row.CreatedAt.Before(now.Add(-resources.IdempotencyWindow)):
		_, err := s.db.NewDelete().Model(row).WherePK().Where("created_at = ?", row.CreatedAt).Exec(ctx)
		return resources.Begun{}, err == nil, err
	case !bytes.Equal(row.Fingerprint, r.Fingerprint):
		return resources.Begun{}, false, resources.Errorf(resources.KindConflict, resources.CodeIdempotencyKeyReused,
			"this Idempotency-Key was used for a different request; use a new key")
	case row.ResponseStatus != nil:
		return resources.Begun{Replay: &resources.StoredResponse{Status: *row.ResponseStatus,
			Header: row.ResponseHeader, Body: row.ResponseBody}}, false, nil
	case row.Lease != nil && row.LockedUntil != nil && row.LockedUntil.After(now):
		return resources.Begun{}, false, inProgress()
	}
	return resources.Begun{}, true, nil
}

// Finish stores the answer for replay and ends the lease.
func (s *Store) Finish(ctx context.Context, l *resources.Lease, res resources.StoredResponse) error {
	return s.leaseUpdate(ctx, s.db, l, `response_status = ?, response_header = ?, response_body = ?, finished_at = ?,
		lease = NULL, locked_until = NULL`, res.Status, headerJSON(res.Header), res.Body, s.now().UTC())
}

// Release ends the lease without an answer (a 5xx): a retry may run again,
// from the recovery point reached.
func (s *Store) Release(ctx context.Context, l *resources.Lease) error {
	return s.leaseUpdate(ctx, s.db, l, "lease = NULL, locked_until = NULL")
}

// SetRecoveryPoint records, inside the business transaction tx, that the
// keyed request reached point, writing the key when the lease has not yet
// (see resources.Idempotency); it fails (rolling the business write back)
// when the lease was lost or the key is there already, so the key and the
// write never disagree.
func (s *Store) SetRecoveryPoint(ctx context.Context, tx bun.IDB, l *resources.Lease, point string, data any) error {
	if l == nil {
		return nil
	}
	r := recovery{lease: l, point: point, data: data}
	key, args, err := s.keyWrite(r, resources.StoredResponse{})
	if err != nil {
		return err
	}
	var id *int64
	if err := s.scan(ctx, tx, key.alone, []any{&id}, args...); err != nil {
		return err
	}
	return keyWritten(l, id)
}

// recovery is a keyed change's recovery point: the point reached, its data
// and the change's result (from which the lease may render the answer).
type recovery struct {
	lease  *resources.Lease
	point  string
	data   any
	result any
}

// auditKeyed writes the audit event of a keyed change and, in the same
// statement (a data-modifying WITH), its recovery point through the lease
// and, when the lease renders one from the result, the answer: a keyed
// change costs no round trip more than an unkeyed one inside its
// transaction. A lost lease fails it (rolling the change back), as
// SetRecoveryPoint does. Without a lease it writes the audit event only.
func (s *Store) auditKeyed(ctx context.Context, tx bun.IDB, e auditEntry, r recovery) error {
	if r.lease == nil {
		return s.writeAudit(ctx, tx, e)
	}
	row, err := e.row()
	if err != nil {
		return err
	}
	answer, ok := s.answerOf(r)
	key, args, err := s.keyWrite(r, answer)
	if err != nil {
		return err
	}
	var id *int64
	args = append(args, row.args()...)
	if err := s.scan(ctx, tx, key.audited, []any{&id}, args...); err != nil {
		return err
	}
	if err := keyWritten(r.lease, id); err != nil {
		return err
	}
	if ok {
		r.lease.Stored = &answer
	}
	return nil
}

// keyStatement is a statement writing a key (keyWith), alone or with the
// change's audit event, each answering the key's id (no row: not written).
type keyStatement struct{ alone, audited statement }

// keyWith makes the statements of the key write sql ($1 to $n), which
// answers the key's id as k.id.
func keyWith(sql string, n int) keyStatement {
	with := "WITH k AS (" + sql + ") "
	return keyStatement{alone: statement(with + "SELECT (SELECT id FROM k)"),
		audited: statement(with + auditValues(n+1) + " RETURNING (SELECT id FROM k)")}
}

// The key writes: the INSERT of a key written by the business transaction
// with its lease, recovery point and answer (or none) — a key older than the
// window is taken over, any other key there already makes it return no
// row —, and the UPDATE of a claimed key's recovery point, with or without
// the answer.
var (
	keyInsert = keyWith(`INSERT INTO idempotency_keys AS k (account, key, fingerprint,
		created_at, lease, locked_until, recovery_point, recovery_data, response_status,
		response_header, response_body, finished_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	ON CONFLICT (account, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
		created_at = EXCLUDED.created_at, lease = EXCLUDED.lease,
		locked_until = EXCLUDED.locked_until, recovery_point = EXCLUDED.recovery_point,
		recovery_data = EXCLUDED.recovery_data, response_status = EXCLUDED.response_status,
		response_header = EXCLUDED.response_header, response_body = EXCLUDED.response_body,
		finished_at = EXCLUDED.finished_at
	WHERE k.created_at < $13
	RETURNING k.id`, 13)
	recoveryUpdate = keyWith(`UPDATE idempotency_keys SET recovery_point = $3, recovery_data = $4
	WHERE id = $1 AND lease = $2 RETURNING id`, 4)
	recoveryAnswer = keyWith(`UPDATE idempotency_keys SET recovery_point = $3, recovery_data = $4,
		response_status = $5, response_header = $6, response_body = $7, finished_at = $8
	WHERE id = $1 AND lease = $2 RETURNING id`, 8)
)

// keyWrite is the statement, and its arguments, that writes a keyed
// change's recovery point (and answer, when set): the key's INSERT while the
// lease has not written it, else the UPDATE of the lease's key.
func (s *Store) keyWrite(r recovery, answer resources.StoredResponse) (keyStatement, []any, error) {
	data, err := json.Marshal(r.data)
	if err != nil {
		return keyStatement{}, nil, err
	}
	now := s.now().UTC()
	var status *int
	var header, finished any
	if answer.Status != 0 {
		status, header, finished = &answer.Status, headerJSON(answer.Header), now
	}
	if r.lease.ID != 0 {
		args := []any{r.lease.ID, r.lease.Token, r.point, json.RawMessage(data)}
		if status == nil {
			return recoveryUpdate, args, nil
		}
		return recoveryAnswer, append(args, *status, header, answer.Body, finished), nil
	}
	q := r.lease.Request
	if q == nil {
		return keyStatement{}, nil, errors.New(
			"idempotency: a lease without a key id and without its request")
	}
	return keyInsert, []any{q.Account, q.Key, q.Fingerprint, now, r.lease.Token,
		now.Add(resources.IdempotencyLeaseTTL), r.point, json.RawMessage(data), status, header,
		answer.Body, finished, now.Add(-resources.IdempotencyWindow)}, nil
}

// keyWritten records the key's id on the lease, or fails: a key there
// already (the insert wrote nothing) is idempotency_request_in_progress,
// after which the middleware claims it and decides; a lost lease is
// idempotency_lease_lost.
func keyWritten(l *resources.Lease, id *int64) error {
	switch {
	case id != nil:
		l.ID = *id
		return nil
	case l.ID == 0:
		return inProgress()
	}
	return leaseLost()
}

// answerOf is the answer the lease renders from the change's result, when
// it renders one (below 500).
func (s *Store) answerOf(r recovery) (resources.StoredResponse, bool) {
	if r.lease.Answer == nil {
		return resources.StoredResponse{}, false
	}
	answer, ok := r.lease.Answer(r.result)
	return answer, ok && answer.Status < 500
}

func leaseLost() error {
	return resources.Errorf(resources.KindConflict, resources.CodeIdempotencyLeaseLost,
		"the Idempotency-Key was taken over by a retry; retry to get its answer")
}

func (s *Store) leaseUpdate(ctx context.Context, db bun.IDB, l *resources.Lease, set string, args ...any) error {
	res, err := db.NewUpdate().Model((*idempotencyRow)(nil)).Set(set, args...).
		Where("id = ? AND lease = ?", l.ID, l.Token).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return leaseLost()
	}
	return nil
}

// DeleteExpired removes keys older than the idempotency window.
func (s *Store) DeleteExpired(ctx context.Context) (int64, error) {
	res, err := s.db.NewDelete().Model((*idempotencyRow)(nil)).
		Where("created_at < ?", s.now().UTC().Add(-resources.IdempotencyWindow)).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func headerJSON(h map[string][]string) map[string][]string {
	if h == nil {
		return map[string][]string{}
	}
	return h
}

var _ resources.Idempotency = (*Store)(nil)

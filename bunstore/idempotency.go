package bunstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
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

// Begin implements resources.Idempotency in one short transaction: a new key
// is recorded and leased; a finished one is replayed; a running one is 429;
// one whose lease ran out (a crash) is taken over at its recovery point.
func (s *Store) Begin(ctx context.Context, r resources.IdempotencyRequest) (resources.Begun, error) {
	var out resources.Begun
	err := s.inTx(ctx, func(tx bun.Tx) error {
		now := s.now().UTC()
		row, err := lockKey(ctx, tx, r, now)
		if err != nil {
			return err
		}
		if !bytes.Equal(row.Fingerprint, r.Fingerprint) {
			return resources.Errorf(resources.KindConflict, resources.CodeIdempotencyKeyReused,
				"this Idempotency-Key was used for a different request; use a new key")
		}
		if row.ResponseStatus != nil {
			out.Replay = &resources.StoredResponse{Status: *row.ResponseStatus, Header: row.ResponseHeader, Body: row.ResponseBody}
			return nil
		}
		if row.LockedUntil != nil && row.LockedUntil.After(now) && row.Lease != nil {
			e := resources.Errorf(resources.KindConflict, resources.CodeIdempotencyInProgress,
				"a request with this Idempotency-Key is still running; retry after Retry-After seconds")
			e.Kind, e.RetryAfter = resources.KindTooManyRequests, max(time.Second, row.LockedUntil.Sub(now))
			return e
		}
		out.Lease, err = takeLease(ctx, tx, row, now)
		return err
	})
	return out, err
}

// lockKey returns the key's row locked FOR UPDATE, inserting it when absent
// and replacing it when older than the idempotency window.
func lockKey(ctx context.Context, tx bun.Tx, r resources.IdempotencyRequest, now time.Time) (*idempotencyRow, error) {
	_, err := tx.NewRaw(`DELETE FROM idempotency_keys WHERE account = ? AND key = ? AND created_at < ?`,
		r.Account, r.Key, now.Add(-resources.IdempotencyWindow)).Exec(ctx)
	if err != nil {
		return nil, err
	}
	_, err = tx.NewRaw(`INSERT INTO idempotency_keys (account, key, fingerprint, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (account, key) DO NOTHING`, r.Account, r.Key, r.Fingerprint, now).Exec(ctx)
	if err != nil {
		return nil, err
	}
	row := &idempotencyRow{}
	err = tx.NewSelect().Model(row).Where("account = ? AND key = ?", r.Account, r.Key).For("UPDATE").Scan(ctx)
	return row, err
}

func takeLease(ctx context.Context, tx bun.Tx, row *idempotencyRow, now time.Time) (*resources.Lease, error) {
	token := rand.Text()
	until := now.Add(resources.IdempotencyLeaseTTL)
	if _, err := tx.NewUpdate().Model(row).Set("lease = ?, locked_until = ?", token, until).WherePK().Exec(ctx); err != nil {
		return nil, err
	}
	return &resources.Lease{ID: row.ID, Token: token, RecoveryPoint: row.RecoveryPoint, RecoveryData: row.RecoveryData}, nil
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
// keyed request reached point; it fails (rolling the business write back)
// when the lease was lost, so the key and the write never disagree.
func (s *Store) SetRecoveryPoint(ctx context.Context, tx bun.IDB, l *resources.Lease, point string, data any) error {
	if l == nil {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return s.leaseUpdate(ctx, tx, l, "recovery_point = ?, recovery_data = ?", point, json.RawMessage(raw))
}

func (s *Store) leaseUpdate(ctx context.Context, db bun.IDB, l *resources.Lease, set string, args ...any) error {
	res, err := db.NewUpdate().Model((*idempotencyRow)(nil)).Set(set, args...).
		Where("id = ? AND lease = ?", l.ID, l.Token).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return resources.Errorf(resources.KindConflict, resources.CodeIdempotencyLeaseLost,
			"the Idempotency-Key was taken over by a retry; retry to get its answer")
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

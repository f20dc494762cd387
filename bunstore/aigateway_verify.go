package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"platformapi/resources"
)

// liveGatewayKeyRow is what a replica's view of live keys holds of a key.
type liveGatewayKeyRow struct {
	ID        int64      `bun:"id"`
	Name      string     `bun:"name"`
	Tier      *string    `bun:"tier"`
	ExpiresAt *time.Time `bun:"expires_at"`
	KeyHash   []byte     `bun:"key_hash"`
}

func (r liveGatewayKeyRow) live() resources.LiveGatewayKey {
	return resources.LiveGatewayKey{ID: r.ID, Name: r.Name, Tier: r.Tier, ExpiresAt: r.ExpiresAt,
		Hash: r.KeyHash}
}

const liveGatewayKeysSQL = `SELECT id, name, tier, expires_at, key_hash FROM ai_gateway_keys
	WHERE revoked_at IS NULL`

// GatewayKeyHashKey returns the server key gateway key values are hashed
// under (created on first use, the same for every replica).
func (s *Store) GatewayKeyHashKey(ctx context.Context) (resources.Pepper, error) {
	k, err := s.ServerKey(ctx, resources.GatewayKeyHashKeyName)
	if err != nil {
		return nil, fmt.Errorf("read the gateway key hash key: %w", err)
	}
	return resources.Pepper(k), nil
}

// LiveGatewayKeys lists every key that is not revoked, expired ones
// included, in one query.
func (s *Store) LiveGatewayKeys(ctx context.Context) ([]resources.LiveGatewayKey, error) {
	var rows []liveGatewayKeyRow
	if err := s.db.NewRaw(liveGatewayKeysSQL).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("list live gateway keys: %w", err)
	}
	out := make([]resources.LiveGatewayKey, len(rows))
	for i, r := range rows {
		out[i] = r.live()
	}
	return out, nil
}

// LiveGatewayKey reads one key that is not revoked; nil when it is revoked
// or does not exist.
func (s *Store) LiveGatewayKey(ctx context.Context, id int64) (*resources.LiveGatewayKey, error) {
	var rows []liveGatewayKeyRow
	if err := s.db.NewRaw(liveGatewayKeysSQL+" AND id = ?", id).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read gateway key %d: %w", id, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	k := rows[0].live()
	return &k, nil
}

// RecordGatewayKeyUses sets last_used_at of every key in uses in one
// UPDATE, never moving it back (replicas flush independently). It writes no
// audit event and leaves updated_at alone: a use is not a change.
func (s *Store) RecordGatewayKeyUses(ctx context.Context, uses []resources.GatewayKeyUse) error {
	if len(uses) == 0 {
		return nil
	}
	ids, ats := make([]int64, len(uses)), make([]time.Time, len(uses))
	for i, u := range uses {
		ids[i], ats[i] = u.ID, u.At
	}
	_, err := s.db.NewRaw(`UPDATE ai_gateway_keys k SET last_used_at = greatest(k.last_used_at, u.at)
		FROM unnest(?::bigint[], ?::timestamptz[]) AS u(id, at) WHERE k.id = u.id`,
		pgdialect.Array(ids), pgdialect.Array(ats)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record the last use of %d gateway keys: %w", len(uses), err)
	}
	return nil
}

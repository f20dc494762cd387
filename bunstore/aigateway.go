package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// gatewayKeyRow is the bun model of ai_gateway_keys; its JSON form is the
// audit state, where key_hash is nulled by the redaction of secret-looking
// members. The key value itself is never stored.
type gatewayKeyRow struct {
	bun.BaseModel `bun:"table:ai_gateway_keys"`
	ID            int64      `bun:"id,pk,autoincrement" json:"id"`
	Name          string     `bun:"name" json:"name"`
	Tier          *string    `bun:"tier" json:"tier"`
	KeyHash       []byte     `bun:"key_hash" json:"key_hash"`
	CreatedBy     string     `bun:"created_by" json:"created_by"`
	CreatedAt     time.Time  `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	RotatedAt     *time.Time `bun:"rotated_at" json:"rotated_at"`
	RevokedAt     *time.Time `bun:"revoked_at" json:"revoked_at"`
	ExpiresAt     *time.Time `bun:"expires_at" json:"expires_at"`
	// LastUsedAt is written only by RecordGatewayKeyUses; audit states leave
	// it out (a use is not a change).
	LastUsedAt *time.Time `bun:"last_used_at" json:"-"`
}

func (r gatewayKeyRow) key() resources.GatewayKey {
	return resources.GatewayKey{ID: r.ID, Name: r.Name, Tier: r.Tier, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, RotatedAt: r.RotatedAt, RevokedAt: r.RevokedAt, ExpiresAt: r.ExpiresAt,
		LastUsedAt: r.LastUsedAt}
}

func gatewayKeyByID(ctx context.Context, db bun.IDB, id int64, lock string) (*gatewayKeyRow, error) {
	return rowByID[gatewayKeyRow](ctx, db, id, lock, resources.NotFound(resources.CodeGatewayKeyNotFound, "no gateway key %d", id))
}

// gatewayKeyHash is HMAC-SHA256 of a key value under the server key
// resources.GatewayKeyHashKeyName, shared by every replica.
func (s *Store) gatewayKeyHash(ctx context.Context, value string) ([]byte, error) {
	k, err := s.GatewayKeyHashKey(ctx)
	if err != nil {
		return nil, err
	}
	return k.Hash(value), nil
}

// namedTier keeps the catalogue rows that name a tier: an empty
// gateway_tier names none.
const namedTier = "gateway_tier <> ''"

// GatewayTierNames returns the distinct tier names (non-null, non-empty
// gateway_tier values) of the catalogue in byte order.
func (s *Store) GatewayTierNames(ctx context.Context) ([]string, error) {
	names := []string{}
	err := s.db.NewRaw(`SELECT DISTINCT gateway_tier COLLATE "C" AS t FROM ai_models
		WHERE `+namedTier+` ORDER BY t`).Scan(ctx, &names)
	return names, err
}

type gatewayTierRow struct {
	Name   string `bun:"name"`
	Models int    `bun:"models"`
}

// ListGatewayTiers lists the tiers with their model counts in byte order of
// the name, one keyset page.
func (s *Store) ListGatewayTiers(ctx context.Context, q resources.PageQuery) (resources.Page[resources.GatewayTier], error) {
	sel := s.db.NewSelect().TableExpr("ai_models").ColumnExpr(`gateway_tier COLLATE "C" AS name, count(*) AS models`).
		Where(namedTier).GroupExpr("1").OrderExpr("1")
	if q.After != nil {
		if len(q.After) != 1 {
			return resources.Page[resources.GatewayTier]{}, errBadKey
		}
		sel.Where(`gateway_tier COLLATE "C" > ?`, q.After[0])
	}
	return scanPage(ctx, sel, q.Limit, func(r gatewayTierRow) resources.GatewayTier {
		return resources.GatewayTier{Name: r.Name, Models: r.Models}
	}, func(t resources.GatewayTier) []string { return []string{t.Name} })
}

// ListGatewayKeys lists key metadata in id order, one keyset page. The
// status filter follows GatewayKey.Status at the store's clock.
func (s *Store) ListGatewayKeys(ctx context.Context, f resources.GatewayKeyFilter, q resources.PageQuery) (resources.Page[resources.GatewayKey], error) {
	sel, err := byID(s.db.NewSelect().Model((*gatewayKeyRow)(nil)), q.After)
	if err != nil {
		return resources.Page[resources.GatewayKey]{}, err
	}
	now := s.now()
	whereAnyOf(sel, f.Status, map[string]string{
		resources.GatewayKeyActive:  "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?0)",
		resources.GatewayKeyExpired: "revoked_at IS NULL AND expires_at <= ?0",
		resources.GatewayKeyRevoked: "revoked_at IS NOT NULL",
	}, now)
	return scanPage(ctx, sel, q.Limit, gatewayKeyRow.key, func(k resources.GatewayKey) []string { return idKey(k.ID) })
}

// GetGatewayKey reads one key's metadata, revoked ones included.
func (s *Store) GetGatewayKey(ctx context.Context, id int64) (*resources.GatewayKey, error) {
	row, err := gatewayKeyByID(ctx, s.db, id, "")
	if err != nil {
		return nil, err
	}
	k := row.key()
	return &k, nil
}

// CreateGatewayKey stores a new key (its hash only) and returns it with its
// value. A keyed create resumed past its recovery point returns the key
// without a value: the value was never kept. The expiry must lie in the
// future.
func (s *Store) CreateGatewayKey(ctx context.Context, a resources.Actor, k resources.NewGatewayKey, l *resources.Lease) (resources.IssuedGatewayKey, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryGatewayKeyCreated); err != nil || resumed {
		key, err := resumeCreate(ctx, id, err, s.GetGatewayKey)
		return resources.IssuedGatewayKey{GatewayKey: key}, err
	}
	if err := resources.CheckGatewayKeyExpiry(k.ExpiresAt, s.now()); err != nil {
		return resources.IssuedGatewayKey{}, err
	}
	value := resources.NewGatewayKeyValue()
	hash, err := s.gatewayKeyHash(ctx, value)
	if err != nil {
		return resources.IssuedGatewayKey{}, err
	}
	var out resources.IssuedGatewayKey
	err = s.inTx(ctx, func(tx bun.Tx) error {
		row := &gatewayKeyRow{Name: k.Name, Tier: k.Tier, KeyHash: hash, CreatedBy: a.Label, ExpiresAt: k.ExpiresAt}
		if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx); err != nil {
			return err
		}
		out = resources.IssuedGatewayKey{GatewayKey: row.key(), Value: value}
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "ai_gateway_key.create", entityType: "ai_gateway_key",
			entityID: idString(row.ID), after: row},
			recovery{lease: l, point: resources.RecoveryGatewayKeyCreated, data: createdID{row.ID}, result: out})
	})
	return out, s.published(ctx, err, resources.GatewayKeyChanged(out.ID))
}

// RotateGatewayKey gives a key that is not revoked a new value, and the
// expiry r sets (see GatewayKeyRotation.Check); the old value stops
// matching at once. A revoked key is 409 gateway_key_revoked. A keyed
// rotation resumed past its recovery point returns the key without a
// value: the value was never kept.
func (s *Store) RotateGatewayKey(ctx context.Context, a resources.Actor, id int64,
	r resources.GatewayKeyRotation, l *resources.Lease) (resources.IssuedGatewayKey, error) {
	if _, resumed, err := resumedID(l, resources.RecoveryGatewayKeyRotated); err != nil || resumed {
		key, err := resumeCreate(ctx, id, err, s.GetGatewayKey)
		return resources.IssuedGatewayKey{GatewayKey: key}, err
	}
	value := resources.NewGatewayKeyValue()
	hash, err := s.gatewayKeyHash(ctx, value)
	if err != nil {
		return resources.IssuedGatewayKey{}, err
	}
	var out resources.IssuedGatewayKey
	err = s.inTx(ctx, func(tx bun.Tx) error {
		before, err := gatewayKeyByID(ctx, tx, id, "UPDATE")
		if err != nil {
			return err
		}
		if before.RevokedAt != nil {
			return resources.Errorf(resources.KindConflict, resources.CodeGatewayKeyRevoked,
				"gateway key %d is revoked and stays so; create a new key with POST /api/v1/ai/gateway/keys", id)
		}
		if err := r.Check(before.key(), s.now()); err != nil {
			return err
		}
		after := &gatewayKeyRow{ID: id}
		if _, err := tx.NewUpdate().Model(after).Set("key_hash = ?", hash).Set("rotated_at = now()").
			Set("expires_at = ?", r.NextExpiry(before.ExpiresAt)).
			Set("updated_at = now()").WherePK().Returning("*").Exec(ctx); err != nil {
			return err
		}
		out = resources.IssuedGatewayKey{GatewayKey: after.key(), Value: value}
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "ai_gateway_key.rotate",
			entityType: "ai_gateway_key", entityID: idString(id), before: before, after: after},
			recovery{lease: l, point: resources.RecoveryGatewayKeyRotated, data: createdID{id}, result: out})
	})
	return out, s.published(ctx, err, resources.GatewayKeyChanged(id))
}

// RevokeGatewayKey revokes a key at once; revoking a revoked key changes
// nothing (and publishes the change again, which is harmless).
func (s *Store) RevokeGatewayKey(ctx context.Context, a resources.Actor, id int64) error {
	return s.published(ctx, s.inTx(ctx, func(tx bun.Tx) error {
		before, err := gatewayKeyByID(ctx, tx, id, "UPDATE")
		if err != nil || before.RevokedAt != nil {
			return err
		}
		after := &gatewayKeyRow{ID: id}
		if _, err := tx.NewUpdate().Model(after).Set("revoked_at = now()").Set("updated_at = now()").
			WherePK().Returning("*").Exec(ctx); err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "ai_gateway_key.revoke", entityType: "ai_gateway_key",
			entityID: idString(id), before: before, after: after})
	}), resources.GatewayKeyChanged(id))
}

var _ resources.AIGateway = (*Store)(nil)

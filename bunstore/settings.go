package bunstore

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

type settingsRow struct {
	bun.BaseModel `bun:"table:platform_settings"`
	ID            int16     `bun:"id,pk" json:"-"`
	APIEnabled    bool      `bun:"api_enabled" json:"api_enabled"`
	UpdatedAt     time.Time `bun:"updated_at" json:"updated_at"`
}

// Settings reads the platform settings.
func (s *Store) Settings(ctx context.Context) (resources.Settings, error) {
	var row settingsRow
	err := s.db.NewSelect().Model(&row).Where("id = 1").Scan(ctx)
	return resources.Settings{APIEnabled: row.APIEnabled, UpdatedAt: row.UpdatedAt}, err
}

// SetAPIEnabled turns the API on or off as an administrator, audited with
// auth kind "session". Setting the current value changes nothing and records
// nothing.
func (s *Store) SetAPIEnabled(ctx context.Context, by resources.Actor, enabled bool) (resources.Settings, error) {
	var out resources.Settings
	changed := false
	err := s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := sessionActor(ctx, tx, by, resources.PermAdmin)
		if err != nil {
			return err
		}
		var before settingsRow
		if err := tx.NewSelect().Model(&before).Where("id = 1").For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		out = resources.Settings{APIEnabled: before.APIEnabled, UpdatedAt: before.UpdatedAt}
		if before.APIEnabled == enabled {
			return nil
		}
		after := before // updated_at as stored (storedPrecision): the answer equals a read
		after.APIEnabled, after.UpdatedAt = enabled, s.now()
		if _, err := tx.NewUpdate().Model(&after).WherePK().Exec(ctx); err != nil {
			return err
		}
		out, changed = resources.Settings{APIEnabled: after.APIEnabled, UpdatedAt: after.UpdatedAt}, true
		action := "settings.api_disable"
		if enabled {
			action = "settings.api_enable"
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: action, entityType: "platform_settings",
			entityID: "api_v1", before: before, after: after})
	})
	if changed {
		err = s.published(ctx, err, resources.Change{Kind: resources.ChangeAPISwitch})
	}
	return out, err
}

// ServerKey returns the named random 32-byte key, creating it on first use;
// every replica sharing the database gets the same key.
func (s *Store) ServerKey(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	_, err := s.db.NewRaw("INSERT INTO server_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
		name, fresh).Exec(ctx)
	if err != nil {
		return nil, err
	}
	var key []byte
	err = s.db.NewRaw("SELECT value FROM server_keys WHERE name = ?", name).Scan(ctx, &key)
	return key, err
}

package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// licenceRow is the bun model of licence (one row).
type licenceRow struct {
	bun.BaseModel  `bun:"table:licence"`
	ID             int16      `bun:"id,pk"`
	InstallationID string     `bun:"installation_id"`
	Bundle         *string    `bun:"bundle"`
	Serial         *string    `bun:"serial"`
	InstalledAt    *time.Time `bun:"installed_at"`
	InstalledBy    *string    `bun:"installed_by"`
	UpdatedAt      time.Time  `bun:"updated_at"`
}

func (r licenceRow) stored() resources.StoredLicence {
	st := resources.StoredLicence{InstallationID: r.InstallationID, InstalledAt: r.InstalledAt, InstalledBy: r.InstalledBy}
	if r.Bundle != nil {
		st.Bundle = *r.Bundle
	}
	return st
}

// auditLicence is a licence as the audit log keeps it: the signed payload
// (never the bundle or its signature) with the serial masked.
func auditLicence(p resources.LicencePayload) resources.LicencePayload {
	p.Serial = resources.MaskSerial(p.Serial)
	p.Features = nonNilStrings(p.Features)
	p.ValidFrom, p.ValidUntil = p.ValidFrom.UTC(), p.ValidUntil.UTC()
	return p
}

// StoredLicence reads the installation id and the installed bundle.
func (s *Store) StoredLicence(ctx context.Context) (resources.StoredLicence, error) {
	var row licenceRow
	err := s.db.NewSelect().Model(&row).Where("id = 1").Scan(ctx)
	return row.stored(), err
}

// InstallLicence stores a bundle verified for this installation, audited
// with the previous licence (as far as it still decodes) and the new one.
// The bundle already installed changes nothing and records nothing.
func (s *Store) InstallLicence(ctx context.Context, a resources.Actor, bundle string,
	p resources.LicencePayload) (resources.StoredLicence, error) {
	return s.installLicence(ctx, func(bun.Tx) (resources.Actor, error) { return a, nil }, bundle, p)
}

// InstallLicenceAs installs a verified bundle as a person in the portal,
// who needs licence-admin-global (or admin).
func (s *Store) InstallLicenceAs(ctx context.Context, by resources.Actor, bundle string,
	p resources.LicencePayload) (resources.StoredLicence, error) {
	return s.installLicence(ctx, func(tx bun.Tx) (resources.Actor, error) {
		return sessionActor(ctx, tx, by, resources.PermLicenceAdmin, resources.PermAdmin)
	}, bundle, p)
}

func (s *Store) installLicence(ctx context.Context, actor func(bun.Tx) (resources.Actor, error), bundle string,
	p resources.LicencePayload) (resources.StoredLicence, error) {
	var out resources.StoredLicence
	err := s.inTx(ctx, func(tx bun.Tx) error {
		a, err := actor(tx)
		if err != nil {
			return err
		}
		var before licenceRow
		if err := tx.NewSelect().Model(&before).Where("id = 1").For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		out = before.stored()
		if before.Bundle != nil && *before.Bundle == bundle {
			return nil
		}
		now := s.now() // as stored (storedPrecision): the answer equals a read
		after := before
		after.Bundle, after.Serial, after.InstalledAt, after.InstalledBy = &bundle, &p.Serial, &now, &a.Label
		if err := updateRow(ctx, tx, &after); err != nil {
			return err
		}
		out = after.stored()
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "licence.install", entityType: "licence",
			entityID: p.Serial, before: previousLicence(before), after: auditLicence(p)})
	})
	return out, err
}

// previousLicence is the audit state of the licence being replaced: nil
// when none was installed; its payload as it decodes, signature unchecked
// (the audit records what was there, valid or not).
func previousLicence(r licenceRow) any {
	if r.Bundle == nil {
		return nil
	}
	p, ok := resources.DecodeLicenceUnverified(*r.Bundle)
	if !ok {
		return map[string]any{"serial": resources.MaskSerial(derefOr(r.Serial))}
	}
	return auditLicence(p)
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var _ resources.Licences = (*Store)(nil)

// usageLockBase and the limit's name give the advisory lock that serialises
// the creates counted against one licence limit.
const usageLockBase = "platformapi.licence-limit."

// checkUsageLimit enforces the licence limit the request carries (put
// there by the API's licence middleware), if any: under a transaction lock
// it counts with countSQL and refuses the create when the count already
// reaches the limit, so concurrent creates cannot pass it together.
func checkUsageLimit(ctx context.Context, tx bun.Tx, name, countSQL string) error {
	limit, ok := resources.UsageLimitFrom(ctx, name)
	if !ok {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext(?))", usageLockBase+name); err != nil {
		return err
	}
	var used int
	if err := tx.NewRaw(countSQL).Scan(ctx, &used); err != nil {
		return err
	}
	return limit.Check(used)
}

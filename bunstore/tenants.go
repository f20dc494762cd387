package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// tenantRow is the bun model of tenants; its JSON form is the audit state.
type tenantRow struct {
	bun.BaseModel `bun:"table:tenants"`
	ID            int64     `bun:"id,pk,autoincrement" json:"id"`
	CustomerID    int64     `bun:"customer_id" json:"customer_id"`
	Slug          string    `bun:"slug" json:"slug"`
	Name          string    `bun:"name" json:"name"`
	Primary       bool      `bun:"is_primary" json:"primary"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
}

func (r tenantRow) tenant() resources.Tenant {
	return resources.Tenant{ID: r.ID, CustomerID: r.CustomerID, Slug: r.Slug, Name: r.Name, Primary: r.Primary,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func tenantByID(ctx context.Context, db bun.IDB, id int64, lock string) (*tenantRow, error) {
	return rowByID[tenantRow](ctx, db, id, lock, resources.NotFound(resources.CodeTenantNotFound, "no tenant %d", id))
}

// ListTenants lists tenants in id order, one keyset page.
func (s *Store) ListTenants(ctx context.Context, f resources.TenantFilter, q resources.PageQuery) (resources.Page[resources.Tenant], error) {
	sel, err := byID(s.db.NewSelect().Model((*tenantRow)(nil)), q.After)
	if err != nil {
		return resources.Page[resources.Tenant]{}, err
	}
	if f.CustomerID != 0 {
		sel.Where("customer_id = ?", f.CustomerID)
	}
	if f.Slug != "" {
		sel.Where("slug = ?", f.Slug)
	}
	return scanPage(ctx, sel, q.Limit, tenantRow.tenant, func(t resources.Tenant) []string { return idKey(t.ID) })
}

// GetTenant reads one tenant.
func (s *Store) GetTenant(ctx context.Context, id int64) (*resources.Tenant, error) {
	row, err := tenantByID(ctx, s.db, id, "")
	if err != nil {
		return nil, err
	}
	t := row.tenant()
	return &t, nil
}

// CreateTenant adds a tenant to a live customer. The slug is unique among
// tenants and never another customer's vcs_group.
func (s *Store) CreateTenant(ctx context.Context, a resources.Actor, t resources.Tenant, l *resources.Lease) (resources.Tenant, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryTenantCreated); err != nil || resumed {
		return resumeCreate(ctx, id, err, s.GetTenant)
	}
	var out resources.Tenant
	err := s.inTx(ctx, func(tx bun.Tx) error {
		row, err := insertTenant(ctx, tx, t)
		if err != nil {
			return err
		}
		out = row.tenant()
		return s.auditKeyed(ctx, tx, tenantCreated(a, row),
			recovery{lease: l, point: resources.RecoveryTenantCreated, data: createdID{row.ID}, result: out})
	})
	return out, err
}

// tenantCreated is the audit event of a tenant's creation, by POST /tenants
// or with its customer (the primary tenant).
func tenantCreated(a resources.Actor, row *tenantRow) auditEntry {
	return auditEntry{actor: a, action: "tenant.create", entityType: "tenant",
		entityID: idString(row.ID), after: row}
}

func insertTenant(ctx context.Context, tx bun.Tx, t resources.Tenant) (*tenantRow, error) {
	c, err := customerByID(ctx, tx, t.CustomerID, "SHARE")
	if err != nil {
		return nil, err
	}
	if err := resources.CheckCustomerLive(c.ID, c.Status, "it takes no new tenant"); err != nil {
		return nil, err
	}
	var groups int
	if err := tx.NewRaw("SELECT count(*) FROM customers WHERE vcs_group = ?", t.Slug).Scan(ctx, &groups); err != nil {
		return nil, err
	}
	taken := resources.Errorf(resources.KindConflict, resources.CodeSlugTaken, "slug %s is taken by a tenant or a customer's vcs_group", t.Slug)
	taken.Field = "slug"
	if groups > 0 {
		return nil, taken
	}
	row := &tenantRow{CustomerID: t.CustomerID, Slug: t.Slug, Name: t.Name}
	if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx); err != nil {
		if uniqueViolation(err, "tenants_slug_key") {
			return nil, taken
		}
		return nil, err
	}
	return row, nil
}

// lockedTenant reads a tenant under a row lock and its customer under a
// share lock: archiving the customer waits for the transaction (or, with
// its NOWAIT lock, is refused 409 conflict), so the status read holds until
// the change commits.
func lockedTenant(ctx context.Context, tx bun.Tx, id int64) (*tenantRow, *customerRow, error) {
	t, err := tenantByID(ctx, tx, id, "UPDATE")
	if err != nil {
		return nil, nil, err
	}
	c, err := customerByID(ctx, tx, t.CustomerID, "SHARE")
	if err != nil {
		return nil, nil, fmt.Errorf("read the customer of tenant %d: %w", id, err)
	}
	return t, c, nil
}

// PatchTenant renames a tenant (slug and customer are frozen); a tenant of
// an archived customer cannot be changed (409 customer_archived).
func (s *Store) PatchTenant(ctx context.Context, a resources.Actor, id int64, p resources.TenantPatch) (resources.Tenant, error) {
	var out resources.Tenant
	err := s.inTx(ctx, func(tx bun.Tx) error {
		before, c, err := lockedTenant(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := resources.CheckTenantChange(before.tenant(), c.Status); err != nil {
			return err
		}
		if out, err = before.tenant().Apply(p); err != nil || out == before.tenant() {
			return err
		}
		after := *before
		after.Name = out.Name
		if err := updateRow(ctx, tx, &after); err != nil {
			return err
		}
		out = after.tenant()
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "tenant.update", entityType: "tenant",
			entityID: idString(id), before: before, after: &after})
	})
	return out, err
}

// DeleteTenant deletes an empty tenant that is not the primary tenant of a
// live customer.
func (s *Store) DeleteTenant(ctx context.Context, a resources.Actor, id int64) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		t, c, err := lockedTenant(ctx, tx, id)
		if err != nil {
			return err
		}
		var projects int
		if err := tx.NewRaw("SELECT count(*) FROM projects WHERE tenant_id = ?", id).Scan(ctx, &projects); err != nil {
			return err
		}
		if err := resources.CheckTenantDelete(t.tenant(), c.Status, projects); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model(t).WherePK().Exec(ctx); err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "tenant.delete", entityType: "tenant",
			entityID: idString(id), before: t})
	})
}

package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// customerRow is the bun model of customers; its JSON form is the audit state.
type customerRow struct {
	bun.BaseModel       `bun:"table:customers"`
	ID                  int64     `bun:"id,pk,autoincrement" json:"id"`
	ShortName           string    `bun:"short_name" json:"short_name"`
	LongName            string    `bun:"long_name" json:"long_name"`
	VCSGroup            string    `bun:"vcs_group" json:"vcs_group"`
	PrimaryContactEmail string    `bun:"primary_contact_email" json:"primary_contact_email"`
	PrimaryContactName  string    `bun:"primary_contact_name" json:"primary_contact_name"`
	BillingTier         string    `bun:"billing_tier" json:"billing_tier"`
	CustomerIndex       int       `bun:"customer_index" json:"customer_index"`
	DefaultEmailTier    int       `bun:"default_email_tier" json:"default_email_tier"`
	Edition             string    `bun:"edition" json:"edition"`
	Notes               *string   `bun:"notes" json:"notes"`
	Status              string    `bun:"status" json:"status"`
	CreatedAt           time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt           time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	ProjectCount        *int      `bun:"project_count,scanonly" json:"-"` // only when a list asks for it
}

func (r customerRow) customer() resources.Customer {
	return resources.Customer{ID: r.ID, ShortName: r.ShortName, LongName: r.LongName, VCSGroup: r.VCSGroup,
		PrimaryContactEmail: r.PrimaryContactEmail, PrimaryContactName: r.PrimaryContactName, BillingTier: r.BillingTier,
		CustomerIndex: r.CustomerIndex, DefaultEmailTier: r.DefaultEmailTier, Edition: r.Edition, Notes: r.Notes,
		Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ProjectCount: r.ProjectCount}
}

func rowOf(c resources.Customer) *customerRow {
	return &customerRow{ID: c.ID, ShortName: c.ShortName, LongName: c.LongName, VCSGroup: c.VCSGroup,
		PrimaryContactEmail: c.PrimaryContactEmail, PrimaryContactName: c.PrimaryContactName, BillingTier: c.BillingTier,
		CustomerIndex: c.CustomerIndex, DefaultEmailTier: c.DefaultEmailTier, Edition: c.Edition, Notes: c.Notes,
		Status: c.Status, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// ListCustomers lists customers in id order (archived included), one page.
func (s *Store) ListCustomers(ctx context.Context, f resources.CustomerFilter, q resources.PageQuery) (resources.Page[resources.Customer], error) {
	sel, err := byID(s.db.NewSelect().Model((*customerRow)(nil)), q.After)
	if err != nil {
		return resources.Page[resources.Customer]{}, err
	}
	for col, v := range map[string]string{"short_name": f.ShortName, "vcs_group": f.VCSGroup} {
		if v != "" {
			sel.Where("? = ?", bun.Ident(col), v)
		}
	}
	whereIn(sel, "status", f.Status)
	if f.WithProjectCount {
		sel.ColumnExpr("?TableAlias.*").
			ColumnExpr("(SELECT count(*) FROM projects p WHERE p.customer_id = ?TableAlias.id) AS project_count")
	}
	return scanPage(ctx, sel, q.Limit, customerRow.customer, func(c resources.Customer) []string { return idKey(c.ID) })
}

// GetCustomer reads one customer, archived included.
func (s *Store) GetCustomer(ctx context.Context, id int64) (*resources.Customer, error) {
	row, err := customerByID(ctx, s.db, id, "")
	if err != nil {
		return nil, err
	}
	c := row.customer()
	return &c, nil
}

// customerByID reads a customer, optionally under a row lock.
func customerByID(ctx context.Context, db bun.IDB, id int64, lock string) (*customerRow, error) {
	return rowByID[customerRow](ctx, db, id, lock, resources.NotFound(resources.CodeCustomerNotFound, "no customer %d", id))
}

// CreateCustomer implements resources.Customers (see there). The primary
// tenant is made in the same transaction, with its own tenant.create event
// (written before the customer's, which carries the idempotency key).
func (s *Store) CreateCustomer(ctx context.Context, a resources.Actor, c resources.CustomerCreate, l *resources.Lease) (resources.Customer, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryCustomerCreated); err != nil || resumed {
		return resumeCreate(ctx, id, err, s.GetCustomer)
	}
	var out resources.Customer
	err := s.inTx(ctx, func(tx bun.Tx) error {
		if err := checkUsageLimit(ctx, tx, resources.LimitCustomers,
			"SELECT count(*) FROM customers WHERE status <> 'archived'"); err != nil {
			return err
		}
		row, err := insertCustomer(ctx, tx, c)
		if err != nil {
			return err
		}
		t, err := insertPrimaryTenant(ctx, tx, row)
		if err != nil {
			return err
		}
		if err := s.writeAudit(ctx, tx, tenantCreated(a, t)); err != nil {
			return fmt.Errorf("audit the primary tenant of customer %d: %w", row.ID, err)
		}
		out = row.customer()
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "customer.create", entityType: "customer",
			entityID: idString(row.ID), after: row},
			recovery{lease: l, point: resources.RecoveryCustomerCreated, data: createdID{row.ID}, result: out})
	})
	return out, err
}

package bunstore

import (
	"context"
	"reflect"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// indexLock serialises allocation of free customer indexes.
const indexLock = 7_100_001

// insertCustomer allocates the index when none was given and inserts the
// row, turning unique violations into their 409 codes. An allocated index
// that another writer (an explicit index, the portal) committed meanwhile
// is allocated again: the request named no index, so it is not refused
// customer_index_taken.
func insertCustomer(ctx context.Context, tx bun.Tx, c resources.CustomerCreate) (*customerRow, error) {
	row := rowOf(c.Customer)
	if c.IndexGiven {
		if _, err := insertCustomerRow(ctx, tx, row, ""); err != nil {
			return nil, customerConflict(err, row)
		}
		return row, nil
	}
	for attempt := 1; attempt <= allocateAttempts; attempt++ {
		idx, err := freeIndex(ctx, tx)
		if err != nil {
			return nil, err
		}
		row.CustomerIndex = idx
		inserted, err := insertCustomerRow(ctx, tx, row, skipTakenIndex)
		if err != nil {
			return nil, customerConflict(err, row)
		}
		if inserted {
			return row, nil
		}
	}
	return nil, indexTaken(row)
}

// skipTakenIndex is the ON clause of an insert with an allocated index.
const skipTakenIndex = "CONFLICT ON CONSTRAINT customers_customer_index_key DO NOTHING"

// allocateAttempts bounds how often an allocated index may be lost to a
// writer that took it without the allocation lock.
const allocateAttempts = 5

// insertCustomerRow inserts the row (with an ON clause when on is not
// empty) and reads back what the database set; inserted is false when the
// ON clause skipped it.
func insertCustomerRow(ctx context.Context, tx bun.Tx, row *customerRow, on string) (bool, error) {
	q := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*")
	if on != "" {
		q.On(on)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// freeIndex returns the lowest free customer index under a transaction lock,
// so concurrent creates get distinct ones; 409 when all 999 are taken
// (archived customers keep theirs).
func freeIndex(ctx context.Context, tx bun.Tx) (int, error) {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", indexLock); err != nil {
		return 0, err
	}
	var idx *int
	err := tx.NewRaw(`SELECT min(g) FROM generate_series(?::int, ?::int) g
		WHERE NOT EXISTS (SELECT 1 FROM customers WHERE customer_index = g)`,
		resources.MinCustomerIndex, resources.MaxCustomerIndex).Scan(ctx, &idx)
	if err != nil {
		return 0, err
	}
	if idx == nil {
		return 0, resources.Errorf(resources.KindConflict, resources.CodeCustomerIndexExhausted,
			"every customer index from %d to %d is taken", resources.MinCustomerIndex, resources.MaxCustomerIndex)
	}
	return *idx, nil
}

func customerConflict(err error, row *customerRow) error {
	switch {
	case uniqueViolation(err, "customers_customer_index_key"):
		return indexTaken(row)
	case uniqueViolation(err, "customers_short_name_key"):
		e := resources.Errorf(resources.KindConflict, resources.CodeShortNameTaken, "short name %s is taken", row.ShortName)
		e.Field = "short_name"
		return e
	case uniqueViolation(err, "customers_vcs_group_key"), uniqueViolation(err, "tenants_slug_key"):
		return resources.VCSGroupTaken(row.VCSGroup)
	}
	return err
}

// indexTaken is 409 customer_index_taken for the row's index.
func indexTaken(row *customerRow) error {
	e := resources.Errorf(resources.KindConflict, resources.CodeCustomerIndexTaken,
		"customer index %d is taken", row.CustomerIndex)
	e.Field = "customer_index"
	return e
}

// insertPrimaryTenant creates the customer's primary tenant, slug = vcs_group.
func insertPrimaryTenant(ctx context.Context, tx bun.Tx, c *customerRow) (*tenantRow, error) {
	t := &tenantRow{CustomerID: c.ID, Slug: c.VCSGroup, Name: c.LongName, Primary: true}
	if _, err := tx.NewInsert().Model(t).ExcludeColumn("id", "created_at", "updated_at").
		Returning("*").Exec(ctx); err != nil {
		return nil, customerConflict(err, c)
	}
	return t, nil
}

// PatchCustomer applies a merge patch under a row lock, audited with the
// states before and after.
func (s *Store) PatchCustomer(ctx context.Context, a resources.Actor, id int64, p resources.CustomerPatch) (resources.Customer, error) {
	var out resources.Customer
	err := s.inTx(ctx, func(tx bun.Tx) error {
		before, err := customerByID(ctx, tx, id, "UPDATE")
		if err != nil {
			return err
		}
		next, err := before.customer().Apply(p)
		if err != nil {
			return err
		}
		out = next
		if reflect.DeepEqual(next, before.customer()) {
			return nil // nothing changed: no write, no event
		}
		after := rowOf(next)
		if err := updateRow(ctx, tx, after); err != nil {
			return err
		}
		out = after.customer()
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "customer.update", entityType: "customer",
			entityID: idString(id), before: before, after: after})
	})
	return out, err
}

// ArchiveCustomer archives a customer with no projects (retired ones
// count). Archiving an archived customer changes nothing. A customer locked
// by a concurrent change is 409 conflict.
func (s *Store) ArchiveCustomer(ctx context.Context, a resources.Actor, id int64) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		before, err := customerByID(ctx, tx, id, "UPDATE NOWAIT")
		if err != nil || before.Status == resources.CustomerArchived {
			return err
		}
		var projects int
		if err := tx.NewRaw("SELECT count(*) FROM projects WHERE customer_id = ?", id).Scan(ctx, &projects); err != nil {
			return err
		}
		if projects > 0 {
			e := resources.Errorf(resources.KindConflict, resources.CodeCustomerHasProjects,
				"customer %d has %d project(s) (retired ones count); it cannot be archived", id, projects)
			e.Blockers = map[string]int{"projects": projects}
			return e
		}
		after := *before
		after.Status = resources.CustomerArchived
		if err := updateRow(ctx, tx, &after); err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "customer.archive", entityType: "customer",
			entityID: idString(id), before: before, after: &after})
	})
}

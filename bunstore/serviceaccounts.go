package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// serviceAccountRow is the bun model of service_accounts.
type serviceAccountRow struct {
	bun.BaseModel `bun:"table:service_accounts"`
	ID            int64     `bun:"id,pk,autoincrement" json:"id"`
	Name          string    `bun:"name" json:"name"`
	Description   string    `bun:"description" json:"description"`
	Permissions   []string  `bun:"permissions,array" json:"permissions"`
	Status        string    `bun:"status,nullzero,default:'active'" json:"status"`
	CreatedBy     int64     `bun:"created_by" json:"created_by"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
}

func (a serviceAccountRow) account() resources.ServiceAccount {
	return resources.ServiceAccount{ID: a.ID, Name: a.Name, Description: a.Description, Permissions: nonNilStrings(a.Permissions),
		Status: a.Status, CreatedBy: a.CreatedBy, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func (a serviceAccountRow) principal() resources.Principal {
	return resources.Principal{Kind: resources.PrincipalServiceAccount, ID: a.ID, Name: a.Name,
		Active: a.Status == "active", Permissions: resources.CanonicalKeys(a.Permissions)}
}

func serviceAccountByName(ctx context.Context, db bun.IDB, name string) (serviceAccountRow, error) {
	var a serviceAccountRow
	err := db.NewSelect().Model(&a).Where("name = ?", name).Scan(ctx)
	if noRows(err) {
		e := resources.NotFound(resources.CodeServiceAccountNotFound, "no service account %q", name)
		e.Field = "service_account"
		return a, e
	}
	return a, err
}

// CreateServiceAccount creates an account as the person `as`, who needs
// api-tokens-admin-global and must hold every permission given.
func (s *Store) CreateServiceAccount(ctx context.Context, by resources.Actor, n resources.NewServiceAccount) (resources.ServiceAccount, error) {
	var out resources.ServiceAccount
	err := s.inTx(ctx, func(tx bun.Tx) error {
		p, err := personByEmail(ctx, tx, by.Label)
		if err != nil {
			return err
		}
		actor, err := sessionActor(ctx, tx, by, resources.PermAPITokensAdmin)
		if err != nil {
			return err
		}
		if err := resources.CheckGrantPermissions(p.principal(), n.Permissions); err != nil {
			return err
		}
		row := &serviceAccountRow{Name: n.Name, Description: n.Description, Permissions: nonNilStrings(n.Permissions), CreatedBy: p.ID}
		if _, err := tx.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
			if uniqueViolation(err, "service_accounts_name_key") {
				return resources.Errorf(resources.KindConflict, resources.CodeNameTaken, "service account %q exists", n.Name)
			}
			if checkViolation(err) {
				return resources.Invalid("name", resources.CodeValidationFailed, "name must match ^[a-z][a-z0-9-]{1,62}$")
			}
			return err
		}
		out = row.account()
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: "service_account.create",
			entityType: "service_account", entityID: idString(row.ID), after: row})
	})
	return out, err
}

// ListServiceAccounts lists accounts in id order, one keyset page.
func (s *Store) ListServiceAccounts(ctx context.Context, q resources.PageQuery) (resources.Page[resources.ServiceAccount], error) {
	sel, err := byID(s.db.NewSelect().Model((*serviceAccountRow)(nil)), q.After)
	if err != nil {
		return resources.Page[resources.ServiceAccount]{}, err
	}
	return scanPage(ctx, sel, q.Limit, serviceAccountRow.account,
		func(a resources.ServiceAccount) []string { return idKey(a.ID) })
}

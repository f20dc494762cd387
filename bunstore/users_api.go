package bunstore

import (
	"context"
	"reflect"
	"slices"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

var _ resources.Users = (*Store)(nil)

// ListUsers lists people in id order, one page; the e-mail filter is
// normalised and compared case-insensitively, as uniqueness is.
func (s *Store) ListUsers(ctx context.Context, f resources.UserFilter, q resources.PageQuery) (resources.Page[resources.User], error) {
	sel := s.db.NewSelect().TableExpr("users AS u").ColumnExpr("u.*").ColumnExpr(userRoles + " AS roles")
	sel, err := byID(sel, q.After)
	if err != nil {
		return resources.Page[resources.User]{}, err
	}
	if f.Email != "" {
		sel.Where("lower(u.email) = lower(?)", f.Email)
	}
	whereIn(sel, "u.status", f.Status)
	if f.Role != "" {
		sel.Where("EXISTS (SELECT 1 FROM user_roles ur WHERE ur.user_id = u.id AND ur.role = ?)", f.Role)
	}
	return scanPage(ctx, sel, q.Limit, userRow.user, func(u resources.User) []string { return idKey(u.ID) })
}

// GetUser reads one person, deactivated included.
func (s *Store) GetUser(ctx context.Context, id int64) (*resources.User, error) {
	row, err := userByID(ctx, s.db, id, false)
	if err != nil {
		return nil, err
	}
	u := row.user()
	return &u, nil
}

// userByID reads a person with sorted role names, optionally locked for update.
func userByID(ctx context.Context, db bun.IDB, id int64, lock bool) (*userRow, error) {
	q := userSelect + "WHERE u.id = ?"
	if lock {
		q += " FOR UPDATE OF u"
	}
	row := &userRow{}
	if err := db.NewRaw(q, id).Scan(ctx, row); err != nil {
		if noRows(err) {
			return nil, resources.NotFound(resources.CodeUserNotFound, "no user %d", id)
		}
		return nil, err
	}
	return row, nil
}

// InviteUser creates an active person with roles the caller's scopes may
// give, the audit event and the idempotency
// recovery point in one transaction; with a lease resumed past that point it
// returns the person already created.
func (s *Store) InviteUser(ctx context.Context, a resources.Actor, u resources.NewUser, scopes []string, l *resources.Lease) (resources.User, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryUserInvited); err != nil || resumed {
		return resumeCreate(ctx, id, err, s.GetUser)
	}
	n, err := resources.NewInvite(u)
	if err != nil {
		return resources.User{}, err
	}
	var out resources.User
	err = s.inTx(ctx, func(tx bun.Tx) error {
		if err := checkGrant(ctx, tx, scopes, n.Roles); err != nil {
			return err
		}
		row, err := insertUser(ctx, tx, n)
		if err != nil {
			return err
		}
		out = row.user()
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "user.invite", entityType: "user",
			entityID: idString(row.ID), after: row},
			recovery{lease: l, point: resources.RecoveryUserInvited, data: createdID{row.ID}, result: out})
	})
	return out, err
}

// checkGrant refuses unknown roles (422 role_not_found) and roles carrying a
// key the caller does not hold (403 forbidden); the roles are share-locked so
// their keys cannot change before the transaction ends.
func checkGrant(ctx context.Context, tx bun.Tx, held, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var rows []roleRow
	if err := tx.NewSelect().Model(&rows).Where("name IN (?)", bun.List(names)).For("SHARE").Scan(ctx); err != nil {
		return err
	}
	roles := make([]resources.Role, len(rows))
	for i, r := range rows {
		roles[i] = r.role()
	}
	for _, n := range names {
		if !slices.ContainsFunc(roles, func(r resources.Role) bool { return r.Name == n }) {
			return resources.Invalid("roles", resources.CodeRoleNotFound, "no role %q", n)
		}
	}
	return resources.CheckRoleGrant(held, roles)
}

// PatchUser applies a merge patch under a row lock; roles replace the set,
// and only roles newly given are checked against the caller's keys. A patch
// that changes nothing writes nothing.
func (s *Store) PatchUser(ctx context.Context, a resources.Actor, id int64, p resources.UserPatch, scopes []string) (resources.User, error) {
	var out resources.User
	err := s.inTx(ctx, func(tx bun.Tx) error {
		before, err := userByID(ctx, tx, id, true)
		if err != nil {
			return err
		}
		next, err := before.user().Apply(p)
		if err != nil {
			return err
		}
		out = next
		if reflect.DeepEqual(next, before.user()) {
			return nil // nothing changed: no write, no event
		}
		if err := checkGrant(ctx, tx, scopes, resources.AddedRoles(before.Roles, next.Roles)); err != nil {
			return err
		}
		var after *userRow
		if err := guardAdministrators(ctx, tx, id, func() (err error) {
			after, err = updateUser(ctx, tx, before, next)
			return err
		}); err != nil {
			return err
		}
		out = after.user()
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "user.update", entityType: "user",
			entityID: idString(id), before: before, after: after})
	})
	return out, s.published(ctx, err, resources.PrincipalChanged(resources.PrincipalUser, id))
}

// updateUser writes the display name and, when they changed, the role set.
func updateUser(ctx context.Context, tx bun.Tx, before *userRow, next resources.User) (*userRow, error) {
	after := *before
	after.DisplayName, after.Roles = next.DisplayName, next.Roles
	if err := updateRow(ctx, tx, &after); err != nil {
		return nil, err
	}
	if slices.Equal(before.Roles, next.Roles) {
		return &after, nil
	}
	if _, err := tx.NewRaw("DELETE FROM user_roles WHERE user_id = ?", before.ID).Exec(ctx); err != nil {
		return nil, err
	}
	for _, r := range next.Roles {
		if err := addRole(ctx, tx, before.ID, r); err != nil {
			return nil, err
		}
	}
	return &after, nil
}

// DeactivateUser deactivates a person (never deletes): status deactivated
// and deactivated_at set; the person's tokens stop at their next request and
// their portal sessions end in the same transaction.
// Deactivating a deactivated person changes nothing; nobody can deactivate
// themself.
func (s *Store) DeactivateUser(ctx context.Context, a resources.Actor, id int64) error {
	err := s.inTx(ctx, func(tx bun.Tx) error {
		before, err := userByID(ctx, tx, id, true)
		if err != nil {
			return err
		}
		change, err := resources.CheckDeactivate(a, before.user())
		if err != nil || !change {
			return err
		}
		after := *before
		err = guardAdministrators(ctx, tx, id, func() error {
			_, err := tx.NewUpdate().Model(&after).Set("status = ?", resources.UserDeactivated).
				Set("deactivated_at = now(), updated_at = now()").WherePK().Returning("status, deactivated_at, updated_at").Exec(ctx)
			if err != nil {
				return err
			}
			return endSessionsOf(ctx, tx, id) // the portal signs the person out at once
		})
		if err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "user.deactivate", entityType: "user",
			entityID: idString(id), before: before, after: &after})
	})
	return s.published(ctx, err, resources.PrincipalChanged(resources.PrincipalUser, id))
}

// guardAdministrators runs change and refuses it (rolling it back) when it
// left the installation without an active person holding the admin key
// while person id held it before: nobody locks the administrators out.
func guardAdministrators(ctx context.Context, tx bun.Tx, id int64, change func() error) error {
	const holds = `SELECT count(DISTINCT u.id) FROM users u JOIN user_roles ur ON ur.user_id = u.id
		JOIN roles r ON r.name = ur.role WHERE u.status = 'active' AND 'admin' = ANY (r.permissions)`
	var was int
	if err := tx.NewRaw(holds+" AND u.id = ?", id).Scan(ctx, &was); err != nil {
		return err
	}
	if err := change(); err != nil || was == 0 {
		return err
	}
	var left int
	if err := tx.NewRaw(holds).Scan(ctx, &left); err != nil || left > 0 {
		return err
	}
	return resources.Errorf(resources.KindConflict, resources.CodeLastAdministrator,
		"user %d is the last active administrator; make another person an administrator first", id)
}

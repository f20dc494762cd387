package bunstore

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// opsActor acts for the host operator running a portal command without
// --as: no person, recorded explicitly as the command line's (the web
// portal's actions are always a signed-in person's).
var opsActor = resources.Actor{Label: "ops:cli"}

// roleRow is the bun model of roles.
type roleRow struct {
	bun.BaseModel `bun:"table:roles"`
	Name          string    `bun:"name,pk" json:"name"`
	Description   string    `bun:"description" json:"description"`
	Permissions   []string  `bun:"permissions,array" json:"permissions"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
}

func (r roleRow) role() resources.Role {
	return resources.Role{Name: r.Name, Description: r.Description, Permissions: nonNilStrings(r.Permissions),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// actorFor resolves who does a people-management action: the operator at the
// console when as is empty, else a person holding one of the keys.
func actorFor(ctx context.Context, tx bun.Tx, by resources.Actor, anyOf ...string) (resources.Actor, error) {
	if by.Label == "" {
		return opsActor, nil
	}
	return sessionActor(ctx, tx, by, anyOf...)
}

// CreateUser creates a person with roles (e-mail normalised; unique).
func (s *Store) CreateUser(ctx context.Context, by resources.Actor, n resources.NewUser) (resources.User, error) {
	var out resources.User
	email, err := resources.NormalizeEmail("email", n.Email)
	if err != nil {
		return out, err
	}
	if l := len(n.DisplayName); l < 1 || l > 120 {
		return out, resources.Invalid("display_name", resources.CodeValidationFailed, "display_name must be 1 to 120 characters")
	}
	err = s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := actorFor(ctx, tx, by, resources.PermUsersWrite, resources.PermAdmin)
		if err != nil {
			return err
		}
		if err := checkPersonGrant(ctx, tx, by, n.Roles); err != nil {
			return err
		}
		row, err := insertUser(ctx, tx, resources.NewUser{Email: email, DisplayName: n.DisplayName, Roles: n.Roles})
		if err != nil {
			return err
		}
		out = row.user()
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: "user.create", entityType: "user",
			entityID: idString(row.ID), after: row})
	})
	return out, err
}

// checkPersonGrant lets the acting person (by) give a new person only the
// roles whose every key they hold, as POST /users does; an administrator,
// who may give any role (GrantRole), and the host operator (no Label) are
// not limited.
func checkPersonGrant(ctx context.Context, tx bun.Tx, by resources.Actor, roles []string) error {
	if by.Label == "" || len(roles) == 0 {
		return nil
	}
	p, err := personByEmail(ctx, tx, by.Label)
	if err != nil {
		return err
	}
	held := p.principal().Permissions
	if slices.Contains(held, resources.PermAdmin) {
		return nil
	}
	return checkGrant(ctx, tx, held, roles)
}

// insertUser inserts an active person (e-mail already normalised) with the
// roles, in that order; 409 email_taken when the address is held in any case.
func insertUser(ctx context.Context, tx bun.Tx, n resources.NewUser) (*userRow, error) {
	row := &userRow{Email: n.Email, DisplayName: n.DisplayName}
	if _, err := tx.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
		if uniqueViolation(err, "users_email_key") {
			return nil, resources.Errorf(resources.KindConflict, resources.CodeEmailTaken, "a person with e-mail %s exists", n.Email)
		}
		return nil, err
	}
	for _, role := range n.Roles {
		if err := addRole(ctx, tx, row.ID, role); err != nil {
			return nil, err
		}
	}
	row.Roles = nonNilStrings(n.Roles)
	return row, nil
}

func addRole(ctx context.Context, tx bun.Tx, userID int64, role string) error {
	res, err := tx.NewRaw(`INSERT INTO user_roles (user_id, role) SELECT ?, name FROM roles WHERE name = ? ON CONFLICT DO NOTHING`,
		userID, role).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 { // held already, or no such role
		return roleExists(ctx, tx, role)
	}
	return nil
}

// roleExists refuses a role name the catalogue does not have (422
// role_not_found, field roles, naming it).
func roleExists(ctx context.Context, tx bun.Tx, role string) error {
	var exists bool
	err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM roles WHERE name = ?)", role).Scan(ctx, &exists)
	if err != nil {
		return err
	}
	if !exists {
		return resources.Invalid("roles", resources.CodeRoleNotFound, "no role %q", role)
	}
	return nil
}

// CreateRole creates a role as an administrator.
func (s *Store) CreateRole(ctx context.Context, by resources.Actor, r resources.Role) (resources.Role, error) {
	var out resources.Role
	if err := resources.ValidatePermissionKeys("permissions", r.Permissions); err != nil {
		return out, err
	}
	err := s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := actorFor(ctx, tx, by, resources.PermAdmin)
		if err != nil {
			return err
		}
		row := &roleRow{Name: r.Name, Description: r.Description, Permissions: nonNilStrings(r.Permissions)}
		if _, err := tx.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
			if uniqueViolation(err, "roles_pkey") {
				return resources.Errorf(resources.KindConflict, resources.CodeRoleTaken, "role %q exists", r.Name)
			}
			if checkViolation(err) {
				return resources.Invalid("name", resources.CodeValidationFailed, "role name must match ^[a-z][a-z0-9-]{1,39}$")
			}
			return err
		}
		out = row.role()
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: "role.create", entityType: "role", entityID: row.Name, after: row})
	})
	return out, err
}

// ListRoles lists every role by name.
func (s *Store) ListRoles(ctx context.Context) ([]resources.Role, error) {
	var rows []roleRow
	if err := s.db.NewSelect().Model(&rows).OrderExpr("name").Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]resources.Role, len(rows))
	for i, r := range rows {
		out[i] = r.role()
	}
	return out, nil
}

// GrantRole gives a person a role; RevokeRole takes it away. Both take effect
// on the person's tokens at their next request. Each is idempotent, as a
// PATCH /users with the same role set is: giving a role held, or taking
// away one not held, changes nothing (Changed false), writes no audit row
// and publishes nothing; a role the catalogue lacks is 422 role_not_found.
func (s *Store) GrantRole(ctx context.Context, by resources.Actor, email, role string,
) (resources.RoleChange, error) {
	return s.changeRoles(ctx, by, email, "user.role_grant", func(tx bun.Tx, id int64) error {
		return addRole(ctx, tx, id, role)
	})
}

// RevokeRole removes a role from a person (see GrantRole).
func (s *Store) RevokeRole(ctx context.Context, by resources.Actor, email, role string,
) (resources.RoleChange, error) {
	return s.changeRoles(ctx, by, email, "user.role_revoke", func(tx bun.Tx, id int64) error {
		return guardAdministrators(ctx, tx, id, func() error {
			res, err := tx.NewRaw("DELETE FROM user_roles WHERE user_id = ? AND role = ?", id, role).Exec(ctx)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 { // not held: nothing to take away
				return roleExists(ctx, tx, role)
			}
			return nil
		})
	})
}

// changeRoles runs change on the person's roles as an administrator and
// audits it when the role set differs after it.
func (s *Store) changeRoles(ctx context.Context, by resources.Actor, email, action string,
	change func(bun.Tx, int64) error) (resources.RoleChange, error) {
	var out resources.RoleChange
	err := s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := actorFor(ctx, tx, by, resources.PermAdmin)
		if err != nil {
			return err
		}
		before, err := userByEmail(ctx, tx, email)
		if err != nil {
			return err
		}
		if before.Status == resources.UserDeactivated { // as PATCH /users: no change to a deactivated person
			return resources.Errorf(resources.KindConflict, resources.CodeUserDeactivated,
				"%s is deactivated and cannot be changed", before.Email)
		}
		if err := change(tx, before.ID); err != nil {
			return err
		}
		after, err := userByEmail(ctx, tx, email)
		if err != nil {
			return err
		}
		if slices.Equal(before.Roles, after.Roles) {
			out = resources.RoleChange{User: after.user()}
			return nil
		}
		if err := updateRow(ctx, tx, &after); err != nil { // the person changed: updated_at moves
			return err
		}
		out = resources.RoleChange{User: after.user(), Changed: true}
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: action, entityType: "user",
			entityID: idString(after.ID), before: before, after: after})
	})
	if err != nil || !out.Changed {
		return out, err
	}
	return out, s.published(ctx, nil, resources.PrincipalChanged(resources.PrincipalUser, out.ID))
}

// userRoles is the sorted role names of the person u, as a SQL expression.
const userRoles = `coalesce((SELECT array_agg(role ORDER BY role) FROM user_roles WHERE user_id = u.id), '{}')`

// userSelect reads people (alias u) with their sorted role names.
const userSelect = "SELECT u.*, " + userRoles + " AS roles FROM users u "

func userByEmail(ctx context.Context, db bun.IDB, email string) (userRow, error) {
	var u userRow
	err := db.NewRaw(userSelect+"WHERE lower(u.email) = lower(?) FOR UPDATE OF u", email).Scan(ctx, &u)
	if noRows(err) {
		return u, resources.NotFound(resources.CodeUserNotFound, "no person with e-mail %q", email)
	}
	return u, err
}

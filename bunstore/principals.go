package bunstore

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// userRow is the bun model of users; Roles is filled from user_roles.
type userRow struct {
	bun.BaseModel `bun:"table:users"`
	ID            int64      `bun:"id,pk,autoincrement" json:"id"`
	Email         string     `bun:"email" json:"email"`
	DisplayName   string     `bun:"display_name" json:"display_name"`
	Status        string     `bun:"status,nullzero,default:'active'" json:"status"`
	CreatedAt     time.Time  `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	DeactivatedAt *time.Time `bun:"deactivated_at" json:"deactivated_at"`
	Roles         []string   `bun:"roles,array,scanonly" json:"roles"`
}

func (u userRow) user() resources.User {
	return resources.User{ID: u.ID, Email: u.Email, DisplayName: u.DisplayName, Roles: nonNilStrings(u.Roles),
		Status: u.Status, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt, DeactivatedAt: u.DeactivatedAt}
}

// personQuery selects a person with role names and the union of their keys.
const personQuery = `
SELECT u.id, u.email, u.display_name, u.status, ` + permissionsOf + ` AS permissions
FROM users u WHERE `

// permissionsOf is the SQL expression of the keys person u holds now (its
// roles' keys, sorted, no repeats; '{}' for none).
const permissionsOf = `coalesce((SELECT array_agg(DISTINCT p ORDER BY p) FROM user_roles ur
  JOIN roles r ON r.name = ur.role, unnest(r.permissions) p WHERE ur.user_id = u.id), '{}')`

type personRow struct {
	ID          int64    `bun:"id"`
	Email       string   `bun:"email"`
	DisplayName string   `bun:"display_name"`
	Status      string   `bun:"status"`
	Permissions []string `bun:"permissions,array"`
}

func (p personRow) principal() resources.Principal {
	return resources.Principal{Kind: resources.PrincipalUser, ID: p.ID, Email: p.Email, Name: p.DisplayName,
		Active: p.Status == "active", Permissions: resources.CanonicalKeys(p.Permissions)}
}

// personByEmail loads a person, any status, by e-mail (case-insensitive).
func personByEmail(ctx context.Context, db bun.IDB, email string) (personRow, error) {
	var p personRow
	err := db.NewRaw(personQuery+"lower(u.email) = lower(?)", email).Scan(ctx, &p)
	if noRows(err) {
		return p, resources.NotFound(resources.CodeUserNotFound, "no person with e-mail %q", email)
	}
	return p, err
}

// ActingPerson is the session actor of the person by names (--as EMAIL)
// when that person is active and holds one of anyOf; else the refusal a
// portal write would give. Commands call it before reading their input,
// so someone without the permission learns nothing of it; the write
// checks again inside its transaction.
func (s *Store) ActingPerson(ctx context.Context, by resources.Actor,
	anyOf ...string) (resources.Actor, error) {
	return sessionActor(ctx, s.db, by, anyOf...)
}

// sessionActor resolves the signed-in person a portal action is done as (by.Label,
// an e-mail): an active person holding at least one of the keys (none: any
// person), with by's request id and source address.
func sessionActor(ctx context.Context, db bun.IDB, by resources.Actor, anyOf ...string) (resources.Actor, error) {
	email := by.Label
	if email == "" {
		return resources.Actor{}, resources.Errorf(resources.KindForbidden, resources.CodeSignInRequired,
			"this portal action needs the acting person (--as EMAIL)")
	}
	p, err := personByEmail(ctx, db, email)
	if err != nil {
		return resources.Actor{}, err
	}
	pr := p.principal()
	if !pr.Active {
		return resources.Actor{}, resources.Errorf(resources.KindForbidden, resources.CodePrincipalDisabled, "%s is deactivated", email)
	}
	if !resources.HasAny(pr.Permissions, anyOf) {
		return resources.Actor{}, resources.Forbidden("the permissions of "+email, anyOf,
			resources.AskForRole(anyOf))
	}
	return sessionOf(by, p), nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

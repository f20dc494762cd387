package resources

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// User field bounds and the recovery point of a keyed invite.
const (
	MaxDisplayNameLen   = 120
	MaxUserRoles        = 20
	RecoveryUserInvited = "user_invited"
)

// Problem codes of the users API.
const (
	CodeUserDeactivated      = "user_deactivated"
	CodeCannotDeactivateSelf = "cannot_deactivate_self"
	CodeLastAdministrator    = "last_administrator"
)

// NewInvite validates an invitation: the e-mail normalised (like a customer
// contact), a display name of 1 to 120 characters, and at most 20 distinct
// role names, returned sorted.
func NewInvite(u NewUser) (NewUser, error) {
	email, err := NormalizeEmail("email", u.Email)
	if err != nil {
		return u, err
	}
	if err := validDisplayName(u.DisplayName); err != nil {
		return u, err
	}
	roles, err := roleSet(u.Roles)
	if err != nil {
		return u, err
	}
	return NewUser{Email: email, DisplayName: u.DisplayName, Roles: roles}, nil
}

// Apply returns the user after the patch: a deactivated person refuses any
// change (409 user_deactivated); roles replace the set and come back sorted.
func (u User) Apply(p UserPatch) (User, error) {
	if u.Status == UserDeactivated {
		return u, Errorf(KindConflict, CodeUserDeactivated, "user %d is deactivated and cannot be changed", u.ID)
	}
	if p.DisplayName.Set {
		if err := validDisplayName(p.DisplayName.Value); err != nil {
			return u, err
		}
	}
	if p.Roles.Set {
		roles, err := roleSet(p.Roles.Value)
		if err != nil {
			return u, err
		}
		p.Roles.Value = roles
	}
	Apply(&u.DisplayName, p.DisplayName)
	Apply(&u.Roles, p.Roles)
	return u, nil
}

// AddedRoles returns the roles in after that are not in before: the ones a
// change grants.
func AddedRoles(before, after []string) []string {
	out := []string{}
	for _, r := range after {
		if !slices.Contains(before, r) {
			out = append(out, r)
		}
	}
	return out
}

// CheckRoleGrant lets a caller give only roles whose every permission key it
// holds itself; otherwise 403 role_not_grantable naming the missing keys,
// sorted, every one of them needed (not forbidden: its Required means any
// one of the keys would do).
func CheckRoleGrant(held []string, roles []Role) error {
	var missing, names []string
	for _, r := range roles {
		before := len(missing)
		for _, k := range r.Permissions {
			if !slices.Contains(held, k) && !slices.Contains(missing, k) {
				missing = append(missing, k)
			}
		}
		if len(missing) > before {
			names = append(names, r.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return &Error{Kind: KindForbidden, Code: CodeRoleNotGrantable,
		Detail: "the caller cannot give role(s) " + strings.Join(names, ", ") +
			": it does not hold every key they carry; it lacks " + strings.Join(missing, ", "),
		Remedy: grantRemedy(missing)}
}

// grantRemedy is what helps a caller lacking keys to give a role: a token
// with every one of them, unless one can never be on a token; then only a
// person in the portal can give the role.
func grantRemedy(missing []string) string {
	var never []string
	for _, k := range missing {
		if !TokenAllowed(k) {
			never = append(never, k)
		}
	}
	if len(never) > 0 {
		return "Ask an administrator to give the role(s) in the portal (Administration, or platformapi " +
			"portal role grant): " + strings.Join(never, ", ") + " can never be put on a token, so no " +
			"token can give them."
	}
	every := missing[0]
	if len(missing) > 1 {
		every = "every one of: " + strings.Join(missing, ", ")
	}
	return "Ask an administrator to give the role(s), or for a token with " + every + "."
}

// CheckDeactivate decides a deactivation: a person cannot deactivate
// themself (409 cannot_deactivate_self); an already deactivated user needs
// no change (false).
func CheckDeactivate(a Actor, u User) (bool, error) {
	if a.UserID != nil && *a.UserID == u.ID {
		return false, Errorf(KindConflict, CodeCannotDeactivateSelf, "a person cannot deactivate themself")
	}
	return u.Status != UserDeactivated, nil
}

func validDisplayName(s string) error {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxDisplayNameLen {
		return Invalid("display_name", CodeValidationFailed, "display_name must be 1 to %d characters", MaxDisplayNameLen)
	}
	return nil
}

// roleSet checks a set of role names (at most MaxUserRoles, no repeats) and
// returns it sorted.
func roleSet(in []string) ([]string, error) {
	if len(in) > MaxUserRoles {
		return nil, Invalid("roles", CodeValidationFailed, "at most %d roles", MaxUserRoles)
	}
	out := slices.Clone(in)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	if len(slices.Compact(slices.Clone(out))) != len(out) {
		return nil, Invalid("roles", CodeValidationFailed, "roles must not repeat")
	}
	return out, nil
}

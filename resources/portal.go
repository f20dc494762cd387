package resources

import (
	"context"
	"net/netip"
	"slices"
	"time"
)

// User is a person of the installation. People are never deleted.
type User struct {
	ID            int64      `json:"id,string"`
	Email         string     `json:"email"`
	DisplayName   string     `json:"display_name"`
	Roles         []string   `json:"roles"`
	Status        string     `json:"status"` // "active" or "deactivated"
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	DeactivatedAt *time.Time `json:"deactivated_at"`
}

// RoleChange is a person after a role was given or taken away, and
// whether the role set changed: a role given again, or taken from a person
// who does not hold it, changes nothing (and is audited as nothing).
type RoleChange struct {
	User
	Changed bool `json:"changed"`
}

// Role is a named set of permission keys held by people.
type Role struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Permissions []string  `json:"permissions"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// NewUser is what the portal needs to create a person.
type NewUser struct {
	Email       string
	DisplayName string
	Roles       []string
}

// NewServiceAccount is what the portal needs to create a service account.
type NewServiceAccount struct {
	Name        string
	Description string
	Permissions []string
}

// NewToken is what the portal needs to mint a token. ServiceAccount empty
// mints a personal token for the acting person.
type NewToken struct {
	Name           string
	Scopes         []string
	Days           int
	AllowDestroy   bool
	AllowedIPs     []netip.Prefix
	ServiceAccount string
	// FormID is the single-use id of the portal form it was posted with
	// ("" none): a second mint with the same id is ErrTokenFormUsed.
	FormID string
}

// ErrTokenFormUsed refuses a mint from a form that already minted a token
// (a resubmitted form): its value was shown once and is not shown again.
var ErrTokenFormUsed = &Error{Kind: KindConflict, Code: CodeConflict, Field: "form_id",
	Detail: "a token was already created from this form; its value was shown once and cannot be shown again"}

// MintedToken is a freshly minted token: its record and its value, which is
// shown this once and never stored. SameNameLive are the ids of the
// owner's other live tokens (not revoked, not expired) of the same name,
// ascending: names are labels and may repeat (a rotation holds two for a
// while), so each answer that mints says which others the name covers.
type MintedToken struct {
	Token        APIToken
	Value        string
	SameNameLive []int64
}

// Portal carries out the actions reserved to a signed-in person. Each one
// runs in one transaction with its audit event (auth kind "session"). The
// actor `by` names the acting person by e-mail (Label) and, for a web
// request, carries its RequestID and SourceIP into the audit row; the store
// fills in the person's UserID. Where an action allows it, an empty Label
// is the host operator at the console, audited as "ops:cli".
type Portal interface {
	SetAPIEnabled(ctx context.Context, by Actor, enabled bool) (Settings, error)
	CreateUser(ctx context.Context, by Actor, u NewUser) (User, error)
	CreateRole(ctx context.Context, by Actor, r Role) (Role, error)
	GrantRole(ctx context.Context, by Actor, email, role string) (RoleChange, error)
	RevokeRole(ctx context.Context, by Actor, email, role string) (RoleChange, error)
	ListRoles(ctx context.Context) ([]Role, error)
	CreateServiceAccount(ctx context.Context, by Actor, sa NewServiceAccount) (ServiceAccount, error)
	CreateToken(ctx context.Context, by Actor, t NewToken) (MintedToken, error)
	RevokeToken(ctx context.Context, by Actor, id int64) (APIToken, error)
	ExtendToken(ctx context.Context, by Actor, id int64, days int) (APIToken, error)
	// MintNodeKey enrols a node's agent or rotates its key (see NodeKeyMint).
	MintNodeKey(ctx context.Context, by Actor, hostname string) (NodeKeyMint, error)
}

// Problem codes of portal actions.
const (
	CodeUserNotFound    = "user_not_found"
	CodeRoleNotFound    = "role_not_found"
	CodeEmailTaken      = "email_taken"
	CodeRoleTaken       = "role_taken"
	CodeNameTaken       = "name_taken"
	CodeScopeNotAllowed = "scope_not_allowed"
	CodeSignInRequired  = "sign_in_required"
)

// CheckMint applies the rules for minting a token: the minter must be an
// active person holding api-tokens-admin-global; every scope must be
// token-allowed and held by the minter and by the token's owner; the lifetime
// must be 1 to 365 days.
func CheckMint(minter, owner Principal, t NewToken) error {
	if !minter.Active || minter.Kind != PrincipalUser {
		return Errorf(KindForbidden, CodeSignInRequired, "only an active, signed-in person can mint tokens")
	}
	if !slices.Contains(minter.Permissions, PermAPITokensAdmin) {
		admins := []string{PermAPITokensAdmin}
		return &Error{Kind: KindForbidden, Code: CodeForbidden, Required: admins,
			Detail: "minting a token needs " + PermAPITokensAdmin, Remedy: AskForRole(admins)}
	}
	if len(t.Name) < 1 || len(t.Name) > 80 {
		return Invalid("name", CodeValidationFailed, "token name must be 1 to 80 characters")
	}
	if len(t.Scopes) == 0 {
		return Invalid("scopes", CodeValidationFailed, "a token needs at least one scope")
	}
	if err := ValidatePermissionKeys("scopes", t.Scopes); err != nil {
		return err
	}
	for _, s := range t.Scopes {
		switch {
		case !TokenAllowed(s):
			return Invalid("scopes", CodeScopeNotAllowed, "%q can never be put on a token", s)
		case !slices.Contains(minter.Permissions, s):
			return Invalid("scopes", CodeScopeNotAllowed, "%q is not held by the minting person", s)
		case !slices.Contains(owner.Permissions, s):
			return Invalid("scopes", CodeScopeNotAllowed, "%q is not held by the token's owner", s)
		}
	}
	return ValidateTokenDays(t.Days)
}

// CheckGrantPermissions requires every key given to a service account to be
// known, one a token can carry (the account acts only through its tokens),
// and held by the person giving it.
func CheckGrantPermissions(creator Principal, keys []string) error {
	if err := ValidatePermissionKeys("permissions", keys); err != nil {
		return err
	}
	for _, k := range keys {
		switch {
		case !TokenAllowed(k):
			return Invalid("permissions", CodeScopeNotAllowed, "%q can never be put on a token, so a "+
				"service account, which acts only through its tokens, could not use it", k)
		case !slices.Contains(creator.Permissions, k):
			return Invalid("permissions", CodeScopeNotAllowed, "%q is not held by the creating person", k)
		}
	}
	return nil
}

// User statuses and problem codes of the users API.
const (
	UserActive      = "active"
	UserDeactivated = "deactivated"
)

// UserFilter narrows the user list; filters are exact and combine.
type UserFilter struct {
	Email  string   `json:"email,omitempty"`  // normalised before comparing
	Status []string `json:"status,omitempty"` // any of active, deactivated
	Role   string   `json:"role,omitempty"`   // holds this role
}

// UserPatch is a merge patch of a user: display name and roles.
type UserPatch struct {
	DisplayName Patch[string]
	Roles       Patch[[]string]
}

// Users is the users API: people are invited (created), changed and
// deactivated, never deleted; a deactivated person's tokens answer 401
// principal_disabled.
type Users interface {
	ListUsers(ctx context.Context, f UserFilter, q PageQuery) (Page[User], error)
	GetUser(ctx context.Context, id int64) (*User, error)
	// InviteUser and PatchUser give only roles whose keys all lie within
	// scopes (the caller's effective scopes).
	InviteUser(ctx context.Context, a Actor, u NewUser, scopes []string, l *Lease) (User, error)
	PatchUser(ctx context.Context, a Actor, id int64, p UserPatch, scopes []string) (User, error)
	DeactivateUser(ctx context.Context, a Actor, id int64) error
}

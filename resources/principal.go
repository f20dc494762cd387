package resources

import (
	"context"
	"net/netip"
	"slices"
	"time"
)

// Principal kinds and authentication kinds as the contract names them.
const (
	PrincipalUser           = "user"
	PrincipalServiceAccount = "service_account"
	AuthKindSession         = "session"
	AuthKindPAT             = "pat"
	AuthKindServiceAccount  = "service_account"
)

// Principal is whoever a credential acts for: a person or a service account,
// with the permission keys it holds at this moment.
type Principal struct {
	Kind        string   // PrincipalUser or PrincipalServiceAccount
	ID          int64    //
	Email       string   // people only
	Name        string   // display name of a person, name of a service account
	Active      bool     // false: deactivated person or disabled account
	Permissions []string // held now: a person's roles' keys, an account's keys
}

// Label is how the principal appears as an audit actor: a person's e-mail
// address, or "service-account:<name>".
func (p Principal) Label() string {
	if p.Kind == PrincipalUser {
		return p.Email
	}
	return "service-account:" + p.Name
}

// Credential is a presented API token resolved to its record and its owner
// (the minting person is Token.MintedBy).
type Credential struct {
	Token   APIToken
	Owner   Principal
	Address netip.Addr // the client's address, when known
}

// EffectiveScopes is the token's scopes intersected with what its owner holds
// now, so a token never does more than its owner.
func (c *Credential) EffectiveScopes() []string {
	return Intersect(c.Token.Scopes, c.Owner.Permissions)
}

// Holds reports whether the token's effective scopes (EffectiveScopes)
// include at least one of keys, as HasAny(c.EffectiveScopes(), keys) does,
// without building the list (every request asks it); no keys: true.
func (c *Credential) Holds(keys ...string) bool {
	if len(keys) == 0 {
		return true
	}
	return slices.ContainsFunc(keys, func(k string) bool {
		return slices.Contains(c.Token.Scopes, k) && slices.Contains(c.Owner.Permissions, k)
	})
}

// AuthKind is "pat" for a personal token and "service_account" otherwise.
func (c *Credential) AuthKind() string {
	if c.Token.Kind == TokenKindServiceAccount {
		return AuthKindServiceAccount
	}
	return AuthKindPAT
}

// Check applies the rules that make a found token unusable, in a fixed order:
// revoked, expired, owner disabled, address not allowed; each refusal says
// what to do next.
func (c *Credential) Check(now time.Time, addr netip.Addr) error {
	t := c.Token
	switch {
	case t.RevokedAt != nil:
		return tokenRefusal(CodeTokenRevoked, c, "")
	case !now.Before(t.ExpiresAt):
		return tokenRefusal(CodeTokenExpired, c, "")
	case !c.Owner.Active:
		return tokenRefusal(CodePrincipalDisabled, c, "")
	case !t.AllowsAddress(addr):
		return tokenRefusal(CodeTokenIPNotAllowed, c, addr.String())
	}
	return nil
}

// APIToken is the stored metadata of a token; its value is never kept.
type APIToken struct {
	ID               int64
	Kind             string // TokenKindPersonal or TokenKindServiceAccount
	Name             string
	UserID           *int64
	ServiceAccountID *int64
	OwnerEmail       string // the owning person's e-mail; "" for a service account
	OwnerName        string // the person's display name or the service account's name
	MintedBy         int64
	Scopes           []string
	AllowDestroy     bool
	AllowedIPs       []netip.Prefix // empty: any address
	ExpiresAt        time.Time
	RevokedAt        *time.Time
	RevokedBy        *string
	LastUsedAt       *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Token statuses, derived from the record and the clock.
const (
	TokenActive  = "active"
	TokenExpired = "expired"
	TokenRevoked = "revoked"
)

// Status derives active, expired or revoked at the given moment.
func (t APIToken) Status(now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return TokenRevoked
	case !now.Before(t.ExpiresAt):
		return TokenExpired
	}
	return TokenActive
}

// AllowsAddress reports whether the token may be used from addr. A token
// without address restrictions allows any; one with restrictions refuses an
// unknown address.
func (t APIToken) AllowsAddress(addr netip.Addr) bool {
	if len(t.AllowedIPs) == 0 {
		return true
	}
	addr = addr.Unmap()
	return addr.IsValid() && slices.ContainsFunc(t.AllowedIPs, func(p netip.Prefix) bool { return p.Contains(addr) })
}

// ExpiryWarning names the warning window a token is in: "14d", "3d" or "".
func (t APIToken) ExpiryWarning(now time.Time) string {
	left := t.ExpiresAt.Sub(now)
	switch {
	case left <= 0:
		return ""
	case left <= 3*24*time.Hour:
		return "3d"
	case left <= 14*24*time.Hour:
		return "14d"
	}
	return ""
}

// ServiceAccount is a non-person principal that acts only through tokens.
type ServiceAccount struct {
	ID          int64     `json:"id,string"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Permissions []string  `json:"permissions"`
	Status      string    `json:"status"` // "active" or "disabled"
	CreatedBy   int64     `json:"created_by,string"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// TokenFilter narrows a token listing; zero members do not filter.
type TokenFilter struct {
	UserID           int64
	ServiceAccountID int64
	Kind             string     // TokenKindPersonal or TokenKindServiceAccount; "": both
	Status           []string   // any of TokenActive, TokenExpired, TokenRevoked
	ExpiresBefore    *time.Time // keeps tokens expiring strictly before it (expired ones too)
}

// Credentials resolves presented tokens; the API's authentication uses it.
type Credentials interface {
	// CredentialByHash finds the token with that keyed hash, its owner and
	// as it is now; a *Error token_invalid when there is none.
	CredentialByHash(ctx context.Context, hash []byte) (*Credential, error)
	// TouchToken records a use of the token at that moment (callers batch).
	TouchToken(ctx context.Context, id int64, at time.Time) error
	// EachLiveTokenHash calls each with the keyed hash of every token that
	// can still authenticate (not revoked, not expired); hash is valid only
	// during the call.
	EachLiveTokenHash(ctx context.Context, each func(hash []byte)) error
	// TokenHash is token id's keyed hash and whether the token can still
	// authenticate; a nil hash when there is no such token.
	TokenHash(ctx context.Context, id int64) (hash []byte, live bool, err error)
}

// TokenReader lists token and service-account metadata for the API.
type TokenReader interface {
	ListTokens(ctx context.Context, f TokenFilter, q PageQuery) (Page[APIToken], error)
	GetToken(ctx context.Context, id int64) (*APIToken, error)
	ListServiceAccounts(ctx context.Context, q PageQuery) (Page[ServiceAccount], error)
}

// Problem codes of tokens and service accounts.
const (
	CodeAPITokenNotFound       = "api_token_not_found"
	CodeServiceAccountNotFound = "service_account_not_found"
)

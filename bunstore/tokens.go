package bunstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// tokenRow is the bun model of api_tokens. Its JSON form is the audit state;
// token_hash is nulled there like every secret-looking member.
type tokenRow struct {
	bun.BaseModel    `bun:"table:api_tokens"`
	ID               int64      `bun:"id,pk,autoincrement" json:"id"`
	Kind             string     `bun:"kind" json:"kind"`
	Name             string     `bun:"name" json:"name"`
	UserID           *int64     `bun:"user_id" json:"user_id"`
	ServiceAccountID *int64     `bun:"service_account_id" json:"service_account_id"`
	MintedBy         int64      `bun:"minted_by" json:"minted_by"`
	TokenHash        []byte     `bun:"token_hash" json:"token_hash"`
	Scopes           []string   `bun:"scopes,array" json:"scopes"`
	AllowDestroy     bool       `bun:"allow_destroy" json:"allow_destroy"`
	AllowedIPs       []string   `bun:"allowed_ips,array,type:cidr[]" json:"allowed_ips"`
	ExpiresAt        time.Time  `bun:"expires_at" json:"expires_at"`
	RevokedAt        *time.Time `bun:"revoked_at" json:"revoked_at"`
	RevokedBy        *string    `bun:"revoked_by" json:"revoked_by"`
	LastUsedAt       *time.Time `bun:"last_used_at" json:"last_used_at"`
	CreatedAt        time.Time  `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt        time.Time  `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	// MintFormID is the single-use id of the portal form that minted it.
	MintFormID *string `bun:"mint_form_id" json:"-"`
	// The owner's e-mail ("" for a service account) and name, read with
	// tokenColumns; they are the owner's, not the token's audit state.
	OwnerEmail string `bun:"owner_email,scanonly" json:"-"`
	OwnerName  string `bun:"owner_name,scanonly" json:"-"`
}

// tokenColumns are the columns a token is read with: its own and its
// owner's e-mail and name (table alias token_row, bun's name for tokenRow).
var tokenColumns = []string{"token_row.*",
	"coalesce((SELECT u.email FROM users AS u WHERE u.id = token_row.user_id), '') AS owner_email",
	"coalesce((SELECT u.display_name FROM users AS u WHERE u.id = token_row.user_id), " +
		"(SELECT sa.name FROM service_accounts AS sa WHERE sa.id = token_row.service_account_id), '') AS owner_name"}

// selectToken selects tokens with tokenColumns.
func selectToken(db bun.IDB, model any) *bun.SelectQuery {
	sel := db.NewSelect().Model(model)
	for _, c := range tokenColumns {
		sel.ColumnExpr(c)
	}
	return sel
}

func (t tokenRow) token() resources.APIToken {
	out := resources.APIToken{ID: t.ID, Kind: t.Kind, Name: t.Name, UserID: t.UserID, ServiceAccountID: t.ServiceAccountID,
		OwnerEmail: t.OwnerEmail, OwnerName: t.OwnerName,
		MintedBy: t.MintedBy, Scopes: resources.CanonicalKeys(t.Scopes), AllowDestroy: t.AllowDestroy, ExpiresAt: t.ExpiresAt,
		RevokedAt: t.RevokedAt, RevokedBy: t.RevokedBy, LastUsedAt: t.LastUsedAt, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	for _, s := range t.AllowedIPs {
		if p, err := netip.ParsePrefix(s); err == nil {
			out.AllowedIPs = append(out.AllowedIPs, p)
		}
	}
	return out
}

// credentialRow is a token with its owner's state, read in one query.
type credentialRow struct {
	tokenRow
	OwnerActive bool     `bun:"owner_active"`
	OwnerPerms  []string `bun:"owner_perms,array"`
}

const credentialQuery = `
SELECT t.*,
  coalesce(u.email, '') AS owner_email,
  coalesce(u.display_name, sa.name) AS owner_name,
  coalesce(u.status = 'active', sa.status = 'active') AS owner_active,
  CASE WHEN t.kind = 'pat' THEN coalesce((SELECT array_agg(DISTINCT p ORDER BY p) FROM user_roles ur
        JOIN roles r ON r.name = ur.role, unnest(r.permissions) p WHERE ur.user_id = u.id), '{}')
       ELSE sa.permissions END AS owner_perms
FROM api_tokens t
LEFT JOIN users u ON u.id = t.user_id
LEFT JOIN service_accounts sa ON sa.id = t.service_account_id
WHERE t.token_hash = ?`

// CredentialByHash implements resources.Credentials: one indexed query
// resolves the token and its owner's permissions now.
func (s *Store) CredentialByHash(ctx context.Context, hash []byte) (*resources.Credential, error) {
	var r credentialRow
	if err := s.db.NewRaw(credentialQuery, hash).Scan(ctx, &r); err != nil {
		if noRows(err) {
			return nil, resources.Unauthorized(resources.CodeTokenInvalid, resources.RemedyTokenInvalid,
				"the token is not known")
		}
		return nil, err
	}
	c := &resources.Credential{Token: r.token()}
	c.Owner = resources.Principal{Kind: resources.PrincipalUser, Email: r.OwnerEmail, Name: r.OwnerName,
		Active: r.OwnerActive, Permissions: resources.CanonicalKeys(r.OwnerPerms)}
	if r.Kind == resources.TokenKindServiceAccount {
		c.Owner.Kind, c.Owner.ID = resources.PrincipalServiceAccount, *r.ServiceAccountID
	} else {
		c.Owner.ID = *r.UserID
	}
	return c, nil
}

// TouchToken records a use; it never moves last_used_at backwards.
func (s *Store) TouchToken(ctx context.Context, id int64, at time.Time) error {
	_, err := s.db.NewRaw(`UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		at.UTC(), id, at.UTC()).Exec(ctx)
	return err
}

// liveToken is true of the tokens that can still authenticate at the
// moment given as its one argument (the store's clock): Credential.Check's
// rules on revocation and expiry, in SQL (TestLiveTokens_AgreeWithCredentialCheck
// keeps the two the same).
const liveToken = `revoked_at IS NULL AND expires_at > ?`

// EachLiveTokenHash implements resources.Credentials. The hashes are read
// into one reused buffer, not one allocation each.
func (s *Store) EachLiveTokenHash(ctx context.Context, each func(hash []byte)) error {
	rows, err := s.db.QueryContext(ctx, `SELECT token_hash FROM api_tokens WHERE `+liveToken,
		s.now().UTC())
	if err != nil {
		return fmt.Errorf("list live token hashes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var hash sql.RawBytes
		if err := rows.Scan(&hash); err != nil {
			return fmt.Errorf("list live token hashes: %w", err)
		}
		each(hash)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list live token hashes: %w", err)
	}
	return nil
}

// TokenHash implements resources.Credentials.
func (s *Store) TokenHash(ctx context.Context, id int64) ([]byte, bool, error) {
	var r struct {
		Hash []byte `bun:"token_hash"`
		Live bool   `bun:"live"`
	}
	err := s.db.NewRaw(`SELECT token_hash, `+liveToken+` AS live FROM api_tokens WHERE id = ?`,
		s.now().UTC(), id).Scan(ctx, &r)
	if noRows(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read token %d's hash: %w", id, err)
	}
	return r.Hash, r.Live, nil
}

// GetToken reads one token's metadata.
func (s *Store) GetToken(ctx context.Context, id int64) (*resources.APIToken, error) {
	var r tokenRow
	if err := selectToken(s.db, &r).Where("id = ?", id).Scan(ctx); err != nil {
		if noRows(err) {
			return nil, resources.NotFound(resources.CodeAPITokenNotFound, "no API token %d", id)
		}
		return nil, err
	}
	t := r.token()
	return &t, nil
}

// ListTokens lists token metadata in id order, one keyset page.
func (s *Store) ListTokens(ctx context.Context, f resources.TokenFilter, q resources.PageQuery) (resources.Page[resources.APIToken], error) {
	sel, err := byID(selectToken(s.db, (*tokenRow)(nil)), q.After)
	if err != nil {
		return resources.Page[resources.APIToken]{}, err
	}
	if f.UserID != 0 {
		sel.Where("user_id = ?", f.UserID)
	}
	if f.ServiceAccountID != 0 {
		sel.Where("service_account_id = ?", f.ServiceAccountID)
	}
	if f.Kind != "" {
		sel.Where("kind = ?", f.Kind)
	}
	whereAnyOf(sel, f.Status, map[string]string{
		resources.TokenRevoked: "revoked_at IS NOT NULL",
		resources.TokenExpired: "revoked_at IS NULL AND expires_at <= ?0",
		resources.TokenActive:  "revoked_at IS NULL AND expires_at > ?0",
	}, s.now().UTC())
	if f.ExpiresBefore != nil {
		sel.Where("expires_at < ?", f.ExpiresBefore.UTC())
	}
	return scanPage(ctx, sel, q.Limit, tokenRow.token, func(t resources.APIToken) []string { return idKey(t.ID) })
}

package bunstore

import (
	"context"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// TokenMinter mints, revokes and extends tokens for the portal; it holds the
// pepper the values are hashed under.
type TokenMinter struct {
	*Store
	Pepper resources.Pepper
}

// CreateToken mints a token as the person `as` (a personal token, or one of
// the named service account), audited with auth kind "session". The value is
// returned once and stored only as its keyed hash. A form id already used
// mints nothing (resources.ErrTokenFormUsed).
func (m TokenMinter) CreateToken(ctx context.Context, by resources.Actor, t resources.NewToken) (resources.MintedToken, error) {
	if !m.Pepper.Configured() {
		return resources.MintedToken{}, resources.PepperUnconfigured("API tokens")
	}
	var out resources.MintedToken
	err := m.inTx(ctx, func(tx bun.Tx) error {
		minter, err := personByEmail(ctx, tx, by.Label)
		if err != nil {
			return err
		}
		row, owner, err := m.tokenOwner(ctx, tx, minter, t.ServiceAccount)
		if err != nil {
			return err
		}
		if err := resources.CheckMint(minter.principal(), owner, t); err != nil {
			return err
		}
		out.Value = resources.NewTokenValue(row.Kind)
		row.Name, row.MintedBy, row.TokenHash, row.Scopes = t.Name, minter.ID, m.Pepper.Hash(out.Value), t.Scopes
		row.AllowDestroy, row.ExpiresAt, row.AllowedIPs = t.AllowDestroy, resources.TokenExpiry(m.now(), t.Days), []string{}
		for _, p := range t.AllowedIPs {
			row.AllowedIPs = append(row.AllowedIPs, p.Masked().String())
		}
		if t.FormID != "" {
			row.MintFormID = &t.FormID
		}
		if _, err := tx.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
			if uniqueViolation(err, "api_tokens_mint_form_id_key") {
				return resources.ErrTokenFormUsed
			}
			return err
		}
		row.OwnerEmail, row.OwnerName = owner.Email, owner.Name
		out.Token = row.token()
		if out.SameNameLive, err = m.sameNameLive(ctx, tx, row); err != nil {
			return err
		}
		return m.writeAudit(ctx, tx, auditEntry{actor: sessionOf(by, minter), action: "api_token.create",
			entityType: "api_token", entityID: idString(row.ID), after: row})
	})
	return out, m.published(ctx, err, resources.TokenChanged(out.Token.ID)) // replicas' live tokens
}

// sameNameLive are the ids of the other live tokens (not revoked, not
// expired) of row's owner that carry row's name, ascending: the one place
// that says which tokens a repeated name covers (portal page and CLI).
func (m TokenMinter) sameNameLive(ctx context.Context, tx bun.Tx, row *tokenRow) ([]int64, error) {
	ids := []int64{}
	err := tx.NewRaw(`SELECT id FROM api_tokens WHERE name = ? AND id <> ? AND revoked_at IS NULL
		AND expires_at > ? AND (user_id = ? OR service_account_id = ?) ORDER BY id`,
		row.Name, row.ID, m.now(), row.UserID, row.ServiceAccountID).Scan(ctx, &ids)
	return ids, err
}

// tokenOwner prepares the row's owner: the minter, or the service account.
func (m TokenMinter) tokenOwner(ctx context.Context, tx bun.Tx, minter personRow, account string) (*tokenRow, resources.Principal, error) {
	if account == "" {
		return &tokenRow{Kind: resources.TokenKindPersonal, UserID: &minter.ID}, minter.principal(), nil
	}
	sa, err := serviceAccountByName(ctx, tx, account)
	if err != nil {
		return nil, resources.Principal{}, err
	}
	if sa.Status != "active" {
		e := resources.Errorf(resources.KindConflict, resources.CodePrincipalDisabled,
			"service account %q is disabled", account)
		e.Field = "service_account"
		return nil, resources.Principal{}, e
	}
	return &tokenRow{Kind: resources.TokenKindServiceAccount, ServiceAccountID: &sa.ID}, sa.principal(), nil
}

// tokenAdmins are the keys that manage other people's tokens.
var tokenAdmins = []string{resources.PermAPITokensAdmin}

// tokenReaders are the keys that see every token (GET /api-tokens).
var tokenReaders = []string{resources.PermAPITokensRead, resources.PermAPITokensAdmin}

// tokenVisible reports whether p may see the token r: their own, or any
// with a key of tokenReaders. Another's token is, to anyone else, no token
// at all (the answer of an unknown id), so ids cannot be probed.
func tokenVisible(p personRow, r *tokenRow) bool {
	return (r.UserID != nil && *r.UserID == p.ID) || resources.HasAny(p.principal().Permissions, tokenReaders)
}

// noToken is the refusal of a token id that does not exist, or that the
// acting person may not see.
func noToken(id int64) error {
	return resources.NotFound(resources.CodeAPITokenNotFound, "no API token %d", id)
}

// RevokeToken stops a token at once. One's own token needs only being signed
// in; another's needs api-tokens-admin-global. Revoking a revoked token
// changes nothing.
func (m TokenMinter) RevokeToken(ctx context.Context, by resources.Actor, id int64) (resources.APIToken, error) {
	return m.changeToken(ctx, by, id, "api_token.revoke", func(p personRow, r *tokenRow) (bool, error) {
		own := r.UserID != nil && *r.UserID == p.ID
		if !own && !resources.HasAny(p.principal().Permissions, tokenAdmins) {
			return false, &resources.Error{Kind: resources.KindForbidden, Code: resources.CodeForbidden,
				Required: tokenAdmins, Detail: "revoking another's token needs " + resources.PermAPITokensAdmin,
				Remedy: resources.AskForRole(tokenAdmins)}
		}
		if r.RevokedAt != nil {
			return false, nil
		}
		now := m.now().UTC()
		r.RevokedAt, r.RevokedBy = &now, &p.Email
		return true, nil
	})
}

// ExtendToken sets a token's expiry to `days` from now (1–365); it needs
// api-tokens-admin-global and refuses a revoked token.
func (m TokenMinter) ExtendToken(ctx context.Context, by resources.Actor, id int64, days int) (resources.APIToken, error) {
	return m.changeToken(ctx, by, id, "api_token.extend", func(p personRow, r *tokenRow) (bool, error) {
		if !resources.HasAny(p.principal().Permissions, tokenAdmins) {
			return false, &resources.Error{Kind: resources.KindForbidden, Code: resources.CodeForbidden,
				Required: tokenAdmins, Detail: "extending a token needs " + resources.PermAPITokensAdmin,
				Remedy: resources.AskForRole(tokenAdmins)}
		}
		if err := resources.ValidateTokenDays(days); err != nil {
			return false, err
		}
		if r.RevokedAt != nil {
			return false, resources.Errorf(resources.KindConflict, resources.CodeTokenRevoked, "token %d is revoked", id)
		}
		r.ExpiresAt = resources.TokenExpiry(m.now(), days)
		return true, nil
	})
}

// changeToken locks a token, lets change decide and edit, then saves and
// audits in the same transaction when it changed. A token the person may
// not see (tokenVisible) is refused as an unknown id.
func (m TokenMinter) changeToken(ctx context.Context, by resources.Actor, id int64, action string,
	change func(personRow, *tokenRow) (bool, error)) (resources.APIToken, error) {
	var out resources.APIToken
	changed := false
	err := m.inTx(ctx, func(tx bun.Tx) error {
		p, err := personByEmail(ctx, tx, by.Label)
		if err != nil {
			return err
		}
		if p.Status != "active" {
			return resources.Errorf(resources.KindForbidden, resources.CodePrincipalDisabled, "%s is deactivated", by.Label)
		}
		var row tokenRow
		if err := selectToken(tx, &row).Where("id = ?", id).For("UPDATE OF token_row").Scan(ctx); err != nil {
			if noRows(err) {
				return noToken(id)
			}
			return err
		}
		if !tokenVisible(p, &row) {
			return noToken(id)
		}
		before := row
		changed, err = change(p, &row)
		if err != nil || !changed {
			out = row.token()
			return err
		}
		row.UpdatedAt = m.now().UTC()
		if _, err := tx.NewUpdate().Model(&row).WherePK().Exec(ctx); err != nil {
			return err
		}
		out = row.token()
		return m.writeAudit(ctx, tx, auditEntry{actor: sessionOf(by, p), action: action, entityType: "api_token",
			entityID: idString(id), before: before, after: row})
	})
	if changed {
		err = m.published(ctx, err, resources.TokenChanged(id))
	}
	return out, err
}

// sessionOf is person p acting in a session, with the request facts of by.
func sessionOf(by resources.Actor, p personRow) resources.Actor {
	return resources.Actor{Label: p.Email, UserID: &p.ID, AuthKind: resources.AuthKindSession,
		RequestID: by.RequestID, SourceIP: by.SourceIP}
}

var _ resources.Portal = TokenMinter{}
var _ resources.Credentials = (*Store)(nil)
var _ resources.TokenReader = (*Store)(nil)
var _ resources.AuditReader = (*Store)(nil)
var _ resources.SettingsReader = (*Store)(nil)

package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// TokenOwner names whom a token acts for.
type TokenOwner struct {
	Kind  string  `json:"kind" enum:"user,service_account"`
	ID    string  `json:"id"`
	Email *string `json:"email" nullable:"true" doc:"A person's e-mail; null for a service account"`
	Name  string  `json:"name" doc:"A person's display name or the service account's name"`
}

// APIToken is a token's metadata; its value is never shown by the API.
type APIToken struct {
	ID            string     `json:"id"`
	Kind          string     `json:"kind" enum:"pat,sat" doc:"pat: personal; sat: service account"`
	Name          string     `json:"name"`
	Owner         TokenOwner `json:"owner"`
	MintedBy      string     `json:"minted_by" doc:"Id of the person who created the token"`
	Scopes        []string   `json:"scopes" doc:"Scopes as minted; effective scopes also depend on the owner's permissions now"`
	AllowDestroy  bool       `json:"allow_destroy"`
	AllowedIPs    []string   `json:"allowed_ips" doc:"Networks the token may be used from; empty: any"`
	Status        string     `json:"status" enum:"active,expired,revoked"`
	ExpiresAt     time.Time  `json:"expires_at"`
	ExpiryWarning *string    `json:"expiry_warning" nullable:"true" doc:"14d or 3d within 14 or 3 days of expiry, else null"`
	RevokedAt     *time.Time `json:"revoked_at" nullable:"true"`
	LastUsedAt    *time.Time `json:"last_used_at" nullable:"true" doc:"Recorded at most once a minute"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// ServiceAccount is a service account's metadata.
type ServiceAccount struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Permissions []string  `json:"permissions"`
	Status      string    `json:"status" enum:"active,disabled"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// ListTokensInput filters the token list.
type ListTokensInput struct {
	ListParams
	UserID           string    `query:"user_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Only the personal tokens of this person"`
	ServiceAccountID string    `query:"service_account_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Only the tokens of this service account"`
	Status           []string  `query:"status" enum:"active,expired,revoked"`
	ExpiresBefore    time.Time `query:"expires_before" maxLength:"40" doc:"Only tokens expiring before this moment (RFC 3339); with status=active: those about to expire"`
}

// TokenIDInput names one token.
type TokenIDInput struct {
	TokenID string `path:"token_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Token id"`
}

// TokenOutput is one token's metadata.
type TokenOutput struct{ Body APIToken }

var tokenReadKeys = []string{resources.PermAPITokensRead, resources.PermAPITokensAdmin}

func (s *Server) registerTokens() {
	Register(s.api, Op{ID: "list-api-tokens", Toolset: ToolsetIdentity, Method: http.MethodGet, Path: "/api-tokens", Tags: []string{"API tokens"},
		Summary: "List API tokens", Permissions: tokenReadKeys, Errors: []int{http.StatusBadRequest},
		Description: "Every API token with its owner's e-mail and name, id order; never a value. status, expires_before (tokens about to expire), user_id, service_account_id.",
		Notes:       "filters `user_id`, `service_account_id`, `status`, `expires_before`; the owner's e-mail and name; metadata only",
	}, s.listTokens)
	Register(s.api, Op{ID: "get-api-token", Toolset: ToolsetIdentity, Method: http.MethodGet, Path: "/api-tokens/{token_id}", Tags: []string{"API tokens"},
		Summary: "Read an API token", Permissions: tokenReadKeys, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One token's owner, scopes, status, expiry and last use; never its value.",
		Notes:       "404 `api_token_not_found`",
	}, func(ctx context.Context, in *TokenIDInput) (*TokenOutput, error) {
		t, err := s.svc.Tokens.GetToken(ctx, parseID(in.TokenID))
		if err != nil {
			return nil, err
		}
		return &TokenOutput{Body: s.tokenView(*t)}, nil
	})
	Register(s.api, Op{ID: "list-service-accounts", Toolset: ToolsetIdentity, Method: http.MethodGet, Path: "/service-accounts", Tags: []string{"API tokens"},
		Summary: "List service accounts", Permissions: tokenReadKeys, Errors: []int{http.StatusBadRequest},
		Description: "Non-human principals tokens can be minted for, with their permissions and status.",
	}, func(ctx context.Context, in *ListParams) (*ListOutput[ServiceAccount], error) {
		return listPage(ctx, s, "service-accounts", nil, in.page(),
			func(q resources.PageQuery) (resources.Page[resources.ServiceAccount], error) {
				return s.svc.Tokens.ListServiceAccounts(ctx, q)
			}, serviceAccountView)
	})
}

func (s *Server) listTokens(ctx context.Context, in *ListTokensInput) (*ListOutput[APIToken], error) {
	f := resources.TokenFilter{UserID: parseID(in.UserID), ServiceAccountID: parseID(in.ServiceAccountID),
		Status: in.Status, ExpiresBefore: timePtr(in.ExpiresBefore)}
	return listPage(ctx, s, "api-tokens", f, in.page(),
		func(q resources.PageQuery) (resources.Page[resources.APIToken], error) {
			return s.svc.Tokens.ListTokens(ctx, f, q)
		}, s.tokenView)
}

func (s *Server) tokenView(t resources.APIToken) APIToken {
	v := APIToken{ID: formatID(t.ID), Kind: t.Kind, Name: t.Name, MintedBy: formatID(t.MintedBy),
		Scopes: nonNil(t.Scopes), AllowDestroy: t.AllowDestroy, AllowedIPs: []string{},
		Status: t.Status(s.cfg.Now()), ExpiresAt: t.ExpiresAt.UTC(), ExpiryWarning: optString(t.ExpiryWarning(s.cfg.Now())),
		RevokedAt: utcPtr(t.RevokedAt), LastUsedAt: utcPtr(t.LastUsedAt), CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
	switch {
	case t.Kind == resources.TokenKindServiceAccount && t.ServiceAccountID != nil:
		v.Owner = TokenOwner{Kind: resources.PrincipalServiceAccount, ID: formatID(*t.ServiceAccountID)}
	case t.UserID != nil:
		v.Owner = TokenOwner{Kind: resources.PrincipalUser, ID: formatID(*t.UserID), Email: optString(t.OwnerEmail)}
	}
	v.Owner.Name = t.OwnerName
	for _, p := range t.AllowedIPs {
		v.AllowedIPs = append(v.AllowedIPs, p.String())
	}
	return v
}

func serviceAccountView(a resources.ServiceAccount) ServiceAccount {
	return ServiceAccount{ID: formatID(a.ID), Name: a.Name, Description: a.Description, Permissions: nonNil(a.Permissions),
		Status: a.Status, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

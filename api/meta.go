package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// WhoamiPrincipal names the caller.
type WhoamiPrincipal struct {
	Kind  string  `json:"kind" enum:"user,service_account" doc:"user or service_account"`
	ID    string  `json:"id"`
	Email *string `json:"email" nullable:"true" doc:"A person's e-mail address; null for a service account"`
	Name  string  `json:"name" doc:"A person's display name or the service account's name"`
}

// WhoamiToken describes the token the request came with.
type WhoamiToken struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	ExpiresAt     time.Time `json:"expires_at"`
	AllowDestroy  bool      `json:"allow_destroy"`
	ExpiryWarning *string   `json:"expiry_warning" nullable:"true" doc:"14d or 3d within 14 or 3 days of expiry, else null"`
}

// WhoamiOutput is the answer of GET /whoami.
type WhoamiOutput struct {
	Body struct {
		Principal WhoamiPrincipal `json:"principal"`
		AuthKind  string          `json:"auth_kind" doc:"pat or service_account"`
		Token     WhoamiToken     `json:"token"`
		Scopes    []string        `json:"scopes" doc:"Effective scopes: the token's scopes held by its owner now, sorted"`
		Now       time.Time       `json:"now" doc:"The server's clock"`
		RateLimit RateStatus      `json:"rate_limit" doc:"The token's rate budget after this call"`
	}
}

// MetaOutput is the answer of GET /meta.
type MetaOutput struct {
	Body struct {
		APIVersion      string `json:"api_version" example:"1.0.0"`
		PlatformVersion string `json:"platform_version" example:"1.0.187"`
	}
}

// PermissionItem is one key of the permission catalogue.
type PermissionItem struct {
	Key          string `json:"key" example:"projects-read-global"`
	Description  string `json:"description"`
	TokenAllowed bool   `json:"token_allowed" doc:"Whether the key can be put on an API token"`
}

// listKey is the key a member selection always keeps: the permission key.
func (PermissionItem) listKey() []string { return []string{"key"} }

// EmptyInput is the input of operations without parameters.
type EmptyInput struct{}

func (s *Server) registerMeta() {
	Register(s.api, Op{ID: "get-whoami", Toolset: ToolsetIdentity, Method: http.MethodGet, Path: "/whoami", Tags: []string{"Meta"},
		Summary: "Who is calling",
		Description: "The calling principal, how it authenticated, its effective scopes, its " +
			"token's expiry and rate budget, and the server's clock.",
		Notes: "principal, auth kind, effective scopes, token expiry, `now` (server clock), " +
			"`rate_limit` (budget left)",
	}, s.whoami)
	Register(s.api, Op{ID: "get-meta", Toolset: ToolsetIdentity, Method: http.MethodGet, Path: "/meta", Tags: []string{"Meta"},
		Summary:     "API and platform version",
		Description: "Which API version this server speaks and which platform release it belongs to.",
		Notes:       "`api_version` 1.0.0, `platform_version` 1.0.187",
	}, func(context.Context, *EmptyInput) (*MetaOutput, error) {
		out := &MetaOutput{}
		out.Body.APIVersion, out.Body.PlatformVersion = resources.APIVersion, resources.PlatformVersion
		return out, nil
	})
	Register(s.api, Op{ID: "list-permissions", Toolset: ToolsetIdentity, Method: http.MethodGet, Path: "/permissions", Tags: []string{"Meta"},
		Summary:     "Every permission key",
		Description: "Every permission key and whether it can be put on a token. Not paginated: next_cursor is always null.",
		Notes:       "every key with `token_allowed`",
	}, func(ctx context.Context, in *FieldsParam) (*ListOutput[PermissionItem], error) {
		var items []PermissionItem
		for _, p := range resources.Permissions() {
			items = append(items, PermissionItem{Key: p.Key, Description: p.Description, TokenAllowed: p.TokenAllowed})
		}
		return staticList(ctx, items, in.Fields)
	})
}

func (s *Server) whoami(ctx context.Context, _ *EmptyInput) (*WhoamiOutput, error) {
	c := CredentialFrom(ctx)
	out := &WhoamiOutput{}
	b := &out.Body
	b.Principal = WhoamiPrincipal{Kind: c.Owner.Kind, ID: formatID(c.Owner.ID), Name: c.Owner.Name}
	if c.Owner.Kind == resources.PrincipalUser {
		b.Principal.Email = &c.Owner.Email
	}
	b.AuthKind = c.AuthKind()
	b.Token = WhoamiToken{ID: formatID(c.Token.ID), Name: c.Token.Name, ExpiresAt: c.Token.ExpiresAt.UTC(),
		AllowDestroy: c.Token.AllowDestroy, ExpiryWarning: optString(c.Token.ExpiryWarning(s.cfg.Now()))}
	b.Scopes = c.EffectiveScopes()
	b.Now, b.RateLimit = s.cfg.Now().UTC(), rateFrom(ctx)
	return out, nil
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

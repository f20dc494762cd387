package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// AIGateway is the OpenAI-compatible gateway clients call.
type AIGateway struct {
	BaseURL string   `json:"base_url" example:"http://127.0.0.1:4000/v1" doc:"Base URL, ending in /v1; call it with Authorization: Bearer <key>"`
	Tiers   []string `json:"tiers" doc:"Every serving tier name in the catalogue (gateway_tier), sorted"`
}

// GatewayTier is a serving tier and how many catalogue rows name it.
type GatewayTier struct {
	Name   string `json:"name" example:"coding"`
	Models int    `json:"models" doc:"Catalogue rows whose gateway_tier is this tier"`
}

// GatewayKey is the metadata of an AI gateway key; never its value.
type GatewayKey struct {
	ID        string     `json:"id" example:"4"`
	Name      string     `json:"name" example:"ci-runner"`
	Tier      *string    `json:"tier" nullable:"true" doc:"Serving tier; sent on as X-Gateway-Tier"`
	Status    string     `json:"status" doc:"active, expired or revoked; an open list"`
	CreatedBy string     `json:"created_by" doc:"Who created it"`
	CreatedAt time.Time  `json:"created_at"`
	RotatedAt *time.Time `json:"rotated_at" nullable:"true" doc:"Last rotation; null when never rotated"`
	RevokedAt *time.Time `json:"revoked_at" nullable:"true"`
	// ExpiresAt (null: never) and LastUsedAt (null: never used; written in
	// batches by the replicas, seconds late) carry no doc tag: every byte of
	// this schema counts twice in the tools/list budget (list and get).
	ExpiresAt  *time.Time `json:"expires_at" nullable:"true"`
	LastUsedAt *time.Time `json:"last_used_at" nullable:"true"`
}

// IssuedGatewayKey is a key as its create or rotation answers it.
type IssuedGatewayKey struct {
	GatewayKey
	Value    string    `json:"value,omitempty" doc:"The key value: only when the request set return_value, and never again anywhere"`
	Warnings []Warning `json:"warnings,omitempty" doc:"value_shown_once: the value was asked for but is not in this answer (a replay of a keyed request)"`
}

// GatewayKeyCreate is the body of POST /ai/gateway/keys.
type GatewayKeyCreate struct {
	Name        string     `json:"name" minLength:"1" maxLength:"80"`
	Tier        *string    `json:"tier,omitempty" nullable:"true" minLength:"1" maxLength:"40" doc:"Serving tier the key is meant for; recorded only"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty" nullable:"true" maxLength:"40" doc:"RFC 3339 instant in the future from which the key no longer opens the gateway; omitted or null: never expires"`
	ReturnValue bool       `json:"return_value,omitempty" doc:"Return the key value in this answer (only here, only once). Default false"`
}

// GatewayKeyRotate is the optional body of POST /ai/gateway/keys/{id}/rotate.
type GatewayKeyRotate struct {
	ReturnValue bool                `json:"return_value,omitempty" doc:"Return the new value in this answer (only here, only once). Default false"`
	ExpiresAt   Nullable[time.Time] `json:"expires_at,omitzero" maxLength:"40" doc:"The key's next expiry: an RFC 3339 instant in the future, or null: never. Omitted: the expiry stays (an expired key needs a new one)"`
}

// listKey is the key a member selection always keeps: the tier's name.
func (GatewayTier) listKey() []string { return []string{"name"} }

// gatewayKeyView shows a key with its status at now.
func gatewayKeyView(k resources.GatewayKey, now time.Time) GatewayKey {
	return GatewayKey{ID: formatID(k.ID), Name: k.Name, Tier: k.Tier, Status: k.Status(now), CreatedBy: k.CreatedBy,
		CreatedAt: k.CreatedAt.UTC(), RotatedAt: utcPtr(k.RotatedAt), RevokedAt: utcPtr(k.RevokedAt),
		ExpiresAt: utcPtr(k.ExpiresAt), LastUsedAt: utcPtr(k.LastUsedAt)}
}

// noStore is the Cache-Control of an answer that may carry a secret shown
// once: no cache, private or shared, keeps it.
const noStore = "no-store"

// issuedView shows the value only when the request asked for it. A keyed
// request stores, for its replays, the same record without the value and
// with the warning value_shown_once; a resumed keyed create has no value
// to show and warns at once.
func issuedView(ctx context.Context, k resources.IssuedGatewayKey, returnValue bool, now time.Time) IssuedGatewayKey {
	out := IssuedGatewayKey{GatewayKey: gatewayKeyView(k.GatewayKey, now)}
	if !returnValue {
		return out
	}
	shownOnce := out
	shownOnce.Warnings = []Warning{{Code: resources.CodeValueShownOnce, Message: "The key value is shown only once, " +
		"in the first answer to this request; a replay never repeats it. Rotate the key to get a new value."}}
	if k.Value == "" {
		return shownOnce
	}
	StoreForReplay(ctx, shownOnce)
	out.Value = k.Value
	return out
}

// Inputs and outputs of the AI gateway operations.
type (
	GatewayKeyIDInput struct {
		KeyID string `path:"key_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Gateway key id"`
	}
	ListGatewayKeysInput struct {
		ListParams
		Status []string `query:"status" enum:"active,expired,revoked" doc:"Only keys of this status"`
	}
	CreateGatewayKeyInput struct {
		Body GatewayKeyCreate
	}
	RotateGatewayKeyInput struct {
		GatewayKeyIDInput
		Body *GatewayKeyRotate
	}
	AIGatewayOutput struct {
		Body AIGateway
	}
	GatewayKeyOutput struct {
		Body GatewayKey
	}
	IssuedGatewayKeyOutput struct {
		CacheControl string `header:"Cache-Control" doc:"no-store: the answer may carry the key's value"`
		Body         IssuedGatewayKey
	}
	GatewayKeyCreatedOutput struct {
		Location     string `header:"Location" doc:"/api/v1/ai/gateway/keys/{id}"`
		CacheControl string `header:"Cache-Control" doc:"no-store: the answer may carry the key's value"`
		Body         IssuedGatewayKey
	}
)

var (
	gatewayReaders   = []string{resources.PermAIRead, resources.PermAIWrite, resources.PermAIGatewayKeys}
	gatewayKeyAdmins = []string{resources.PermAIGatewayKeys}
)

const returnValueRule = " The value is returned only when return_value is true, only in this answer; it is stored as " +
	"HMAC-SHA256 under a server key and cannot be read again. With an Idempotency-Key, a replay answers the same " +
	"record without the value and with the warning value_shown_once; the stored answer never holds the value."

func (s *Server) registerAIGateway() {
	tags := []string{"AI"}
	Register(s.api, Op{ID: "get-ai-gateway", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/ai/gateway", Tags: tags,
		Summary: "Read the AI gateway", Permissions: gatewayReaders,
		Description: "The base URL clients call and the serving tiers named in the catalogue.",
		Notes:       "`base_url` (ends in `/v1`), sorted `tiers`",
	}, s.getAIGateway)
	Register(s.api, Op{ID: "list-ai-gateway-tiers", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/ai/gateway/tiers", Tags: tags,
		Summary: "List the AI gateway tiers", Permissions: gatewayReaders, Errors: []int{http.StatusBadRequest},
		Description: "Every gateway_tier of the catalogue, sorted by name, with how many models name it.",
		Notes:       "tier names with model counts",
	}, s.listGatewayTiers)
	s.registerGatewayKeys(tags)
}

func (s *Server) getAIGateway(ctx context.Context, _ *struct{}) (*AIGatewayOutput, error) {
	tiers, err := s.svc.AIGateway.GatewayTierNames(ctx)
	if err != nil {
		return nil, err
	}
	base := s.cfg.GatewayBaseURL
	if base == "" {
		base = resources.DefaultGatewayBaseURL
	}
	return &AIGatewayOutput{Body: AIGateway{BaseURL: base, Tiers: tiers}}, nil
}

func (s *Server) listGatewayTiers(ctx context.Context, in *ListParams) (*ListOutput[GatewayTier], error) {
	return listPage(ctx, s, "ai-gateway-tiers", struct{}{}, in.page(), func(q resources.PageQuery) (resources.Page[resources.GatewayTier], error) {
		return s.svc.AIGateway.ListGatewayTiers(ctx, q)
	}, func(t resources.GatewayTier) GatewayTier { return GatewayTier{Name: t.Name, Models: t.Models} })
}

func (s *Server) registerGatewayKeys(tags []string) {
	Register(s.api, Op{ID: "list-ai-gateway-keys", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/ai/gateway/keys", Tags: tags,
		Summary: "List AI gateway keys", Permissions: gatewayKeyAdmins, Errors: []int{http.StatusBadRequest},
		Description: "Gateway key metadata in id order, revoked keys included; never a value. status=expired,revoked: keys that no longer open the gateway.",
		Notes: "metadata only, never a value; filter `status` (`active`, `expired`, " +
			"`revoked`); records carry `expires_at` and `last_used_at` (written within seconds " +
			"of a use at the gateway)",
	}, s.listGatewayKeys)
	Register(s.api, Op{ID: "create-ai-gateway-key", Toolset: ToolsetAI, Method: http.MethodPost, Path: "/ai/gateway/keys", Tags: tags,
		Feature: resources.FeatureAI,
		Status:  http.StatusCreated, Summary: "Create an AI gateway key", Permissions: gatewayKeyAdmins, Idempotent: true,
		Errors: []int{http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Creates a key with a random value (sk-gw- and 40 base62 characters), optionally expiring at " +
			"expires_at (in the future, else 422 validation_failed). The installation's gateway lets it through at " +
			"/ai-gateway/verify at once." + returnValueRule,
		Notes: "201; optional `expires_at` (RFC 3339, in the future, else 422 naming it; null: " +
			"never); the value is returned once, only with `\"return_value\": true`; " +
			"`Idempotency-Key` replays answer the record without it and the warning " +
			"`value_shown_once`",
	}, s.createGatewayKey)
	s.registerGatewayKey(tags)
}

// registerGatewayKey declares the operations on one gateway key.
func (s *Server) registerGatewayKey(tags []string) {
	Register(s.api, Op{ID: "get-ai-gateway-key", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/ai/gateway/keys/{key_id}", Tags: tags,
		Summary: "Read an AI gateway key", Permissions: gatewayKeyAdmins, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One gateway key's name, tier, status and expiry, and when it was last used; never its value.",
		Notes:       "metadata",
	}, s.getGatewayKey)
	Register(s.api, Op{ID: "rotate-ai-gateway-key", Toolset: ToolsetAI, Method: http.MethodPost, Path: "/ai/gateway/keys/{key_id}/rotate",
		Feature: resources.FeatureAI,
		Tags:    tags, Summary: "Rotate an AI gateway key", Permissions: gatewayKeyAdmins, Idempotent: true,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType,
			http.StatusUnprocessableEntity},
		Description: "Gives the key a new random value; the old value stops working at once (on every replica). " +
			"The expiry stays unless expires_at sets a new one; an expired key needs one (422 naming " +
			"expires_at). A revoked key is 409 gateway_key_revoked." + returnValueRule,
		Notes: "new value (same rule); the old one stops working at the gateway at once, on " +
			"every replica; the expiry stays unless `expires_at` sets a new one (null: never; an " +
			"expired key needs one)",
	}, s.rotateGatewayKey)
	Register(s.api, Op{ID: "revoke-ai-gateway-key", Toolset: ToolsetAI, Method: http.MethodDelete, Path: "/ai/gateway/keys/{key_id}", Tags: tags,
		Feature: resources.FeatureAI,
		Summary: "Revoke an AI gateway key", Permissions: gatewayKeyAdmins, Destroy: true, Status: http.StatusNoContent,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Revokes the key at once: every replica's /ai-gateway/verify refuses it; the row stays, " +
			"listed as revoked. Revoking a revoked key succeeds and changes nothing.",
		Notes: "revokes: refused at the gateway at once, on every replica",
	}, func(ctx context.Context, in *GatewayKeyIDInput) (*struct{}, error) {
		return nil, s.svc.AIGateway.RevokeGatewayKey(ctx, ActorFrom(ctx), parseID(in.KeyID))
	})
}

func (s *Server) listGatewayKeys(ctx context.Context, in *ListGatewayKeysInput) (*ListOutput[GatewayKey], error) {
	f := resources.GatewayKeyFilter{Status: in.Status}
	return listPage(ctx, s, "ai-gateway-keys", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.GatewayKey], error) {
		return s.svc.AIGateway.ListGatewayKeys(ctx, f, q)
	}, func(k resources.GatewayKey) GatewayKey { return gatewayKeyView(k, s.cfg.Now()) })
}

func (s *Server) getGatewayKey(ctx context.Context, in *GatewayKeyIDInput) (*GatewayKeyOutput, error) {
	k, err := s.svc.AIGateway.GetGatewayKey(ctx, parseID(in.KeyID))
	if err != nil {
		return nil, err
	}
	return &GatewayKeyOutput{Body: gatewayKeyView(*k, s.cfg.Now())}, nil
}

func (s *Server) createGatewayKey(ctx context.Context, in *CreateGatewayKeyInput) (*GatewayKeyCreatedOutput, error) {
	k, err := s.svc.AIGateway.CreateGatewayKey(ctx, ActorFrom(ctx), resources.NewGatewayKey{Name: in.Body.Name,
		Tier: in.Body.Tier, ExpiresAt: in.Body.ExpiresAt}, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &GatewayKeyCreatedOutput{Location: Prefix + "/ai/gateway/keys/" + formatID(k.ID),
		CacheControl: noStore, Body: issuedView(ctx, k, in.Body.ReturnValue, s.cfg.Now())}, nil
}

func (s *Server) rotateGatewayKey(ctx context.Context, in *RotateGatewayKeyInput) (*IssuedGatewayKeyOutput, error) {
	var body GatewayKeyRotate
	if in.Body != nil {
		body = *in.Body
	}
	k, err := s.svc.AIGateway.RotateGatewayKey(ctx, ActorFrom(ctx), parseID(in.KeyID),
		resources.GatewayKeyRotation{ExpiresAt: body.ExpiresAt.Patch()}, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &IssuedGatewayKeyOutput{CacheControl: noStore,
		Body: issuedView(ctx, k, body.ReturnValue, s.cfg.Now())}, nil
}

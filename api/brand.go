package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// Brand is the installation's brand.
type Brand struct {
	Attribution    string    `json:"attribution" readOnly:"true" doc:"Read-only: the line under the product name, computed from first_party"`
	BrandColor     string    `json:"brand_color" pattern:"^#[0-9a-f]{6}$" example:"#2563eb" doc:"Lower-case"`
	FaviconAssetID *string   `json:"favicon_asset_id" nullable:"true" doc:"A brand asset of kind favicon; null: the built-in one"`
	FirstParty     bool      `json:"first_party" readOnly:"true" doc:"Read-only: selects the attribution line; no request changes it"`
	LogoAssetID    *string   `json:"logo_asset_id" nullable:"true" doc:"A brand asset of kind logo; null: the built-in one"`
	Version        int       `json:"version" readOnly:"true" doc:"Read-only: grows by one with every change; also the ETag"`
	UpdatedAt      time.Time `json:"updated_at" readOnly:"true"`
}

// BrandPut is the body of PUT /brand: every writable member (nullable ones
// included: null clears), and the read-only members only as read.
type BrandPut struct {
	BrandColor     string              `json:"brand_color" pattern:"^#[0-9a-fA-F]{6}$" example:"#2563EB" doc:"# and six hexadecimal digits; stored lower-case"`
	LogoAssetID    *string             `json:"logo_asset_id" nullable:"true" pattern:"^[1-9][0-9]{0,17}$" doc:"A brand asset of kind logo, or null"`
	FaviconAssetID *string             `json:"favicon_asset_id" nullable:"true" pattern:"^[1-9][0-9]{0,17}$" doc:"A brand asset of kind favicon, or null (clears it)"`
	FirstParty     Optional[bool]      `json:"first_party,omitzero" doc:"Read-only: accepted only with its current value"`
	Attribution    Optional[string]    `json:"attribution,omitzero" maxLength:"200" doc:"Read-only: accepted only with its current value"`
	Version        Optional[int]       `json:"version,omitzero" minimum:"1" maximum:"2147483647" doc:"Read-only; when sent it is a precondition like If-Match: another version is 412"`
	UpdatedAt      Optional[time.Time] `json:"updated_at,omitzero" maxLength:"40" doc:"Read-only: accepted only with its current value"`
}

// Inputs and outputs of the brand operations.
type (
	PutBrandInput struct {
		IfMatch string `header:"If-Match" maxLength:"200" doc:"The brand's ETag (\"<version>\"); makes the PUT conditional: another version is 412 precondition_failed"`
		Body    BrandPut
	}
	BrandOutput struct {
		ETag string `header:"ETag" doc:"The brand's version, quoted"`
		Body Brand
	}
	GetBrandInput struct {
		IfNoneMatch string `header:"If-None-Match" maxLength:"200" doc:"ETags the client holds (\"<version>\"; W/ allowed, compared weakly) or *: a current one is 304 Not Modified, no body"`
	}
	// GetBrandOutput is the brand, or with Status 304 its ETag alone (Huma
	// writes no body for a 304).
	GetBrandOutput struct {
		Status int
		ETag   string `header:"ETag" doc:"The brand's version, quoted"`
		Body   Brand
	}
)

var (
	brandReaders = []string{resources.PermBrandRead, resources.PermBrandWrite}
	brandWriters = []string{resources.PermBrandWrite}
)

func (s *Server) registerBrand() {
	tags := []string{"Brand"}
	Register(s.api, Op{ID: "get-brand", Toolset: ToolsetBrand, Method: http.MethodGet, Path: "/brand", Tags: tags, Summary: "Read the brand",
		Permissions: brandReaders, Description: "The stored brand; its version is also the ETag header.",
		Notes: "`brand_color`, `logo_asset_id`, `favicon_asset_id`, read-only `first_party`, " +
			"`attribution`, `version`, `updated_at`; `ETag: \"<version>\"`; `If-None-Match` " +
			"naming it (weak comparison) or `*` → 304, no body",
	}, s.getBrand)
	Register(s.api, Op{ID: "replace-brand", Toolset: ToolsetBrand, Method: http.MethodPut, Path: "/brand", Tags: tags,
		Feature: resources.FeatureBrand, Summary: "Replace the brand", Permissions: brandWriters,
		Errors: []int{http.StatusBadRequest, http.StatusPreconditionFailed, http.StatusUnsupportedMediaType,
			http.StatusUnprocessableEntity},
		Description: "Replaces every writable member (send all back as read to change one; null clears an asset). " +
			"The read-only members (first_party, attribution, version, updated_at) are accepted only with their current " +
			"value (else 422 read_only_field). With If-Match (or a sent version) the PUT is conditional: a stale one is 412 " +
			"precondition_failed with the current ETag, and nothing changes. favicon_asset_id must name an asset of kind " +
			"favicon and logo_asset_id one of kind logo (else 422 brand_asset_invalid). A PUT that changes nothing " +
			"keeps the version.",
		Notes: "replaces every writable member (all required; `null` clears an asset); " +
			"`brand_color` `^#[0-9a-fA-F]{6}$`, stored lower-case; read-only members only as " +
			"read (422 `read_only_field`); `If-Match` (or a sent `version`) stale → 412 " +
			"`precondition_failed` with the current `ETag`, nothing changes; assets of the right kind (422 " +
			"`brand_asset_invalid`); licence feature `brand`",
	}, s.putBrand)
	s.registerBrandAssets(tags)
}

// Resolve reads every If-Match line: the lines of a list header combine
// into one list (RFC 9110, section 5.3), so a tag on a later line counts.
func (in *PutBrandInput) Resolve(ctx huma.Context) []error {
	in.IfMatch = headerList(ctx, "If-Match")
	return nil
}

// headerList is every line of the list header name, joined into one list.
func headerList(ctx huma.Context, name string) string {
	var lines []string
	ctx.EachHeader(func(n, value string) {
		if strings.EqualFold(n, name) {
			lines = append(lines, value)
		}
	})
	return strings.Join(lines, ",")
}

// Resolve reads every If-None-Match line, as one list (RFC 9110, 5.3).
func (in *GetBrandInput) Resolve(ctx huma.Context) []error {
	in.IfNoneMatch = headerList(ctx, "If-None-Match")
	return nil
}

func (s *Server) getBrand(ctx context.Context, in *GetBrandInput) (*GetBrandOutput, error) {
	b, err := s.svc.Brands.GetBrand(ctx)
	if err != nil {
		return nil, err
	}
	if b.NotModified(resources.ParseIfNoneMatch(in.IfNoneMatch)) {
		return &GetBrandOutput{Status: http.StatusNotModified, ETag: b.ETag()}, nil
	}
	out := brandOutput(b)
	return &GetBrandOutput{Status: http.StatusOK, ETag: out.ETag, Body: out.Body}, nil
}

func (s *Server) putBrand(ctx context.Context, in *PutBrandInput) (*BrandOutput, error) {
	body := in.Body
	r := resources.BrandReplace{BrandColor: body.BrandColor, LogoAssetID: optionalID(body.LogoAssetID),
		FaviconAssetID: optionalID(body.FaviconAssetID), FirstParty: body.FirstParty.Patch(),
		Attribution: body.Attribution.Patch(), Version: body.Version.Patch(), UpdatedAt: body.UpdatedAt.Patch(),
		IfMatch: resources.ParseIfMatch(in.IfMatch)}
	b, err := s.svc.Brands.ReplaceBrand(ctx, ActorFrom(ctx), r)
	if err != nil {
		return nil, err
	}
	return brandOutput(b), nil
}

func brandOutput(b resources.Brand) *BrandOutput {
	return &BrandOutput{ETag: b.ETag(), Body: Brand{Attribution: b.Attribution(), BrandColor: b.BrandColor,
		FaviconAssetID: formatIDPtr(b.FaviconAssetID), FirstParty: b.FirstParty, LogoAssetID: formatIDPtr(b.LogoAssetID),
		Version: b.Version, UpdatedAt: b.UpdatedAt.UTC()}}
}

// optionalID reads an id the schema has checked (pattern), or nil.
func optionalID(s *string) *int64 {
	if s == nil {
		return nil
	}
	id, _ := strconv.ParseInt(*s, 10, 64)
	return &id
}

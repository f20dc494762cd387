package api

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// BrandAsset is an uploaded image's metadata.
type BrandAsset struct {
	ID          string    `json:"id" example:"3"`
	Kind        string    `json:"kind" enum:"logo,favicon" doc:"Other values may appear"`
	ContentType string    `json:"content_type" example:"image/png"`
	SizeBytes   int       `json:"size_bytes"`
	SHA256      string    `json:"sha256" doc:"SHA-256 of the bytes, lower-case hex"`
	CreatedAt   time.Time `json:"created_at"`
}

func brandAssetView(a resources.BrandAsset) BrandAsset {
	return BrandAsset{ID: formatID(a.ID), Kind: a.Kind, ContentType: a.ContentType, SizeBytes: a.SizeBytes,
		SHA256: hex.EncodeToString(a.SHA256), CreatedAt: a.CreatedAt.UTC()}
}

// Inputs and outputs of the brand asset operations.
type (
	BrandAssetIDInput struct {
		AssetID string `path:"asset_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Brand asset id"`
	}
	ListBrandAssetsInput struct {
		ListParams
		Kind []string `query:"kind" enum:"logo,favicon" doc:"Only assets of this kind"`
	}
	UploadBrandAssetInput struct {
		Kind        string `query:"kind" required:"true" enum:"logo,favicon" doc:"What the image is for"`
		RawBody     []byte `contentType:"image/png"`
		contentType string
	}
	BrandAssetOutput struct {
		Body BrandAsset
	}
	BrandAssetCreatedOutput struct {
		Location string `header:"Location" doc:"/api/v1/brand/assets/{id}"`
		Body     BrandAsset
	}
	BrandAssetContentOutput struct {
		ContentType  string `header:"Content-Type" doc:"The asset's type, as uploaded and sniffed"`
		NoSniff      string `header:"X-Content-Type-Options" doc:"nosniff"`
		CSP          string `header:"Content-Security-Policy" doc:"default-src 'none'; sandbox"`
		ETag         string `header:"ETag" doc:"The SHA-256 of the bytes, quoted"`
		CacheControl string `header:"Cache-Control"`
		Body         []byte
	}
)

// Resolve keeps the declared Content-Type of the upload, which the bytes
// must sniff as.
func (in *UploadBrandAssetInput) Resolve(ctx huma.Context) []error {
	in.contentType = ctx.Header("Content-Type")
	return nil
}

func (s *Server) registerBrandAssets(tags []string) {
	Register(s.api, Op{ID: "list-brand-assets", Toolset: ToolsetBrand, Method: http.MethodGet, Path: "/brand/assets", Tags: tags,
		Summary: "List brand assets", Permissions: brandReaders, Errors: []int{http.StatusBadRequest},
		Description: "Uploaded logos and favicons in id order, kind filters them (metadata; " +
			"each asset's bytes: REST GET /api/v1/brand/assets/{asset_id}/content).",
		Notes: "filter `kind`; metadata `{id, kind, content_type, size_bytes, sha256, " +
			"created_at}`",
	}, s.listBrandAssets)
	Register(s.api, Op{ID: "upload-brand-asset", Toolset: ToolsetBrand, Method: http.MethodPost, Path: "/brand/assets", Tags: tags,
		Status: http.StatusCreated, Summary: "Upload a brand asset", Permissions: brandWriters, Idempotent: true,
		Feature: resources.FeatureBrand, BodyTypes: resources.BrandAssetTypes,
		MaxBodyBytes: resources.MaxBrandAssetBytes + 1, // Huma refuses a body of exactly its limit
		Errors:       []int{http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "The body is the image itself, sent with its Content-Type (image/png, image/jpeg, image/webp or " +
			"image/x-icon; SVG and anything else is 415), at most 1 MiB (else 413 body_too_large), with ?kind=logo or " +
			"?kind=favicon. The bytes are sniffed and must be of the declared type (else 422 asset_type_mismatch).",
		Notes: "the raw image as the body with its `Content-Type` (`image/png`, `image/jpeg`, " +
			"`image/webp`, `image/x-icon`; SVG and others 415) and `?kind=logo|favicon`; ≤ 1 " +
			"MiB (413 `body_too_large`); bytes sniffed (422 `asset_type_mismatch`); 201 + " +
			"`Location`; `Idempotency-Key`; licence feature `brand`",
	}, s.uploadBrandAsset)
	Register(s.api, Op{ID: "get-brand-asset", Toolset: ToolsetBrand, Method: http.MethodGet, Path: "/brand/assets/{asset_id}", Tags: tags,
		Summary: "Read a brand asset's metadata", Permissions: brandReaders,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound}, Description: "One uploaded logo's or favicon's kind, media type, size, SHA-256 and upload time.",
		Notes: "metadata; 404 `brand_asset_not_found`",
	}, s.getBrandAsset)
	Register(s.api, Op{ID: "get-brand-asset-content", Toolset: ToolsetBrand, Method: http.MethodGet, Path: "/brand/assets/{asset_id}/content",
		Tags: tags, Summary: "Download a brand asset", Permissions: brandReaders, ResultTypes: resources.BrandAssetTypes,
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "The image's bytes with its type and X-Content-Type-Options: nosniff. Not an MCP tool (not JSON).",
		Notes: "the bytes with their type, `X-Content-Type-Options: nosniff`, " +
			"`Content-Security-Policy: default-src 'none'; sandbox`; not an MCP tool (not JSON)",
	}, s.brandAssetContent)
}

func (s *Server) listBrandAssets(ctx context.Context, in *ListBrandAssetsInput) (*ListOutput[BrandAsset], error) {
	f := resources.BrandAssetFilter{Kind: in.Kind}
	return listPage(ctx, s, "brand-assets", f, in.page(),
		func(q resources.PageQuery) (resources.Page[resources.BrandAsset], error) {
			return s.svc.Brands.ListBrandAssets(ctx, f, q)
		}, brandAssetView)
}

func (s *Server) uploadBrandAsset(ctx context.Context, in *UploadBrandAssetInput) (*BrandAssetCreatedOutput, error) {
	n, err := resources.CheckBrandAsset(in.Kind, in.contentType, bytes.Clone(in.RawBody))
	if err != nil {
		return nil, err
	}
	a, err := s.svc.Brands.CreateBrandAsset(ctx, ActorFrom(ctx), n, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &BrandAssetCreatedOutput{Location: Prefix + "/brand/assets/" + formatID(a.ID), Body: brandAssetView(a)}, nil
}

func (s *Server) getBrandAsset(ctx context.Context, in *BrandAssetIDInput) (*BrandAssetOutput, error) {
	a, err := s.svc.Brands.GetBrandAsset(ctx, parseID(in.AssetID))
	if err != nil {
		return nil, err
	}
	return &BrandAssetOutput{Body: brandAssetView(*a)}, nil
}

func (s *Server) brandAssetContent(ctx context.Context, in *BrandAssetIDInput) (*BrandAssetContentOutput, error) {
	a, content, err := s.svc.Brands.BrandAssetContent(ctx, parseID(in.AssetID))
	if err != nil {
		return nil, err
	}
	return &BrandAssetContentOutput{ContentType: a.ContentType, NoSniff: "nosniff",
		CSP: "default-src 'none'; sandbox", ETag: `"` + hex.EncodeToString(a.SHA256) + `"`,
		CacheControl: "private, max-age=300", Body: content}, nil
}

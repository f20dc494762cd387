package resources

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Brand asset kinds, limits, accepted types and problem codes.
const (
	AssetKindLogo    = "logo"
	AssetKindFavicon = "favicon"
	// MaxBrandAssetBytes is the largest asset upload (1 MiB).
	MaxBrandAssetBytes = 1 << 20

	CodeBrandAssetNotFound = "brand_asset_not_found" // 404 on a path
	CodeBrandAssetInvalid  = "brand_asset_invalid"   // 422: a body names no asset, or one of another kind
	CodeAssetTypeMismatch  = "asset_type_mismatch"   // 422: the bytes are not of the declared type
	CodePreconditionFailed = "precondition_failed"   // 412: If-Match or the sent version is stale

	attributionFirstParty = "Made by the Cloud Platform team"
	attributionPartner    = "Powered by Cloud Platform"
)

// BrandAssetTypes are the media types an asset may have; SVG is refused (it
// can carry script).
var BrandAssetTypes = []string{"image/png", "image/jpeg", "image/webp", "image/x-icon"}

var brandColorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Brand is the installation's brand. Version grows by one with every
// change and is the brand's ETag.
type Brand struct {
	BrandColor     string    `json:"brand_color"`
	LogoAssetID    *int64    `json:"logo_asset_id"`
	FaviconAssetID *int64    `json:"favicon_asset_id"`
	FirstParty     bool      `json:"first_party"`
	Version        int       `json:"version"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Attribution is the line under the product name, chosen by FirstParty.
func (b Brand) Attribution() string {
	if b.FirstParty {
		return attributionFirstParty
	}
	return attributionPartner
}

// ETag is the brand's strong entity tag: its version, quoted.
func (b Brand) ETag() string { return `"` + strconv.Itoa(b.Version) + `"` }

// BrandReplace is a PUT of the brand: every writable member, the read-only
// members as sent (each accepted only with its current value), and the
// request's If-Match.
type BrandReplace struct {
	BrandColor     string
	LogoAssetID    *int64
	FaviconAssetID *int64
	FirstParty     Patch[bool]
	Attribution    Patch[string]
	Version        Patch[int]
	UpdatedAt      Patch[time.Time]
	IfMatch        IfMatch
}

// IfMatch is a parsed If-Match header. Absent: no condition.
type IfMatch struct {
	Present  bool
	Any      bool  // the whole field is "*"
	Versions []int // strong tags "N" (bare N is accepted too); weak tags never match
}

// ParseIfMatch reads an If-Match header value ("" when not sent). The field
// is "*" or a list of entity tags (RFC 9110, section 13.1.1): a "*" inside a
// list is not a wildcard and matches no version.
func ParseIfMatch(h string) IfMatch {
	anyTag, versions := parseTagList(h, false)
	return IfMatch{Present: strings.TrimSpace(h) != "", Any: anyTag, Versions: versions}
}

// parseTagList reads a conditional header's field: "*" (anyTag), or the
// versions its entity tags name; with weak, W/"N" names version N too. A
// "*" inside a list is not a wildcard and names no version.
func parseTagList(h string, weak bool) (anyTag bool, versions []int) {
	for _, tag := range strings.Split(h, ",") {
		tag = strings.TrimSpace(tag)
		if weak {
			tag = strings.TrimPrefix(tag, "W/")
		}
		if n, ok := strongVersionTag(tag); ok {
			versions = append(versions, n)
		}
	}
	return strings.TrimSpace(h) == "*", versions
}

// IfNoneMatch is a parsed If-None-Match header of a read. Absent: no
// condition, nothing matches.
type IfNoneMatch struct {
	Any      bool  // the whole field is "*"
	Versions []int // tags "N" or W/"N" (bare N is accepted too): compared weakly
}

// ParseIfNoneMatch reads an If-None-Match header value ("" when not sent).
// The field is "*" or a list of entity tags (RFC 9110, section 13.1.2),
// compared weakly: W/"N" names version N as "N" does. A "*" inside a list
// is not a wildcard.
func ParseIfNoneMatch(h string) IfNoneMatch {
	anyTag, versions := parseTagList(h, true)
	return IfNoneMatch{Any: anyTag, Versions: versions}
}

// NotModified reports whether a read with If-None-Match m gets 304 Not
// Modified: m is "*" (the brand always exists) or names its version.
func (b Brand) NotModified(m IfNoneMatch) bool {
	return m.Any || slices.Contains(m.Versions, b.Version)
}

// strongVersionTag reads a strong tag "N" (or a bare N) spelled exactly as
// an ETag is: a version in canonical decimal, so "02", "+2" or an
// unbalanced quote is another tag, never version 2 (strong comparison).
func strongVersionTag(tag string) (int, bool) {
	inner := tag
	if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
		inner = tag[1 : len(tag)-1]
	}
	n, err := strconv.Atoi(inner)
	return n, err == nil && n > 0 && strconv.Itoa(n) == inner
}

// Preconditions refuses a replace whose If-Match or sent version does not
// name the current version: 412 precondition_failed carrying the current
// ETag, nothing changes.
func (b Brand) Preconditions(r BrandReplace) error {
	stale := r.IfMatch.Present && !r.IfMatch.Any && !slices.Contains(r.IfMatch.Versions, b.Version) ||
		r.Version.Set && !r.Version.Null && r.Version.Value != b.Version
	if stale {
		return &Error{Kind: KindPreconditionFailed, Code: CodePreconditionFailed, ETag: b.ETag(),
			Detail: "the brand is at version " + strconv.Itoa(b.Version) + "; read it again and resend"}
	}
	return nil
}

// Replace applies a PUT: the read-only members must be absent or current
// (422 read_only_field), the colour is stored lower-case. It returns the
// brand with the new writable members (version and time unchanged).
func (b Brand) Replace(r BrandReplace) (Brand, error) {
	if err := ReadOnly("first_party", r.FirstParty, b.FirstParty); err != nil {
		return b, err
	}
	if err := ReadOnly("attribution", r.Attribution, b.Attribution()); err != nil {
		return b, err
	}
	if err := ReadOnly("version", r.Version, b.Version); err != nil {
		return b, err
	}
	if r.UpdatedAt.Set && (r.UpdatedAt.Null || !r.UpdatedAt.Value.Equal(b.UpdatedAt)) {
		return b, readOnly("updated_at")
	}
	if !brandColorPattern.MatchString(r.BrandColor) {
		return b, Invalid("brand_color", CodeValidationFailed, "brand_color is # and six hexadecimal digits")
	}
	next := b
	next.BrandColor = strings.ToLower(r.BrandColor)
	next.LogoAssetID, next.FaviconAssetID = r.LogoAssetID, r.FaviconAssetID
	return next, nil
}

// BrandAsset is an uploaded image; its bytes are read separately.
type BrandAsset struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	ContentType string    `json:"content_type"`
	SizeBytes   int       `json:"size_bytes"`
	SHA256      []byte    `json:"sha256"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
}

// EntityTypeBrandAsset is the entity type of brand asset events.
const EntityTypeBrandAsset = "brand_asset"

// ShowAssetDigest spells the sha256 member of a brand asset's audit state
// in lower-case hex, as the asset's metadata and its ETag do: rows written
// before 2026-11-27 hold it in standard base64 (32 bytes in 44 characters,
// never a hex spelling), and are shown as written since.
func ShowAssetDigest(state map[string]any) {
	s, ok := state["sha256"].(string)
	if !ok || len(s) != base64.StdEncoding.EncodedLen(sha256.Size) {
		return
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == sha256.Size {
		state["sha256"] = hex.EncodeToString(b)
	}
}

// CheckAssetRef refuses a reference (member field) to no asset or to an
// asset of another kind than want: 422 brand_asset_invalid.
func CheckAssetRef(field, want string, id int64, a *BrandAsset) error {
	switch {
	case a == nil:
		return Invalid(field, CodeBrandAssetInvalid, "%s: no brand asset %d", field, id)
	case a.Kind != want:
		return Invalid(field, CodeBrandAssetInvalid, "%s: brand asset %d is a %s, not a %s", field, id, a.Kind, want)
	}
	return nil
}

// NewBrandAsset is a checked upload.
type NewBrandAsset struct {
	Kind        string
	ContentType string
	Content     []byte
	SHA256      []byte
}

// CheckBrandAsset checks an upload: a known kind, an accepted declared
// type, at most MaxBrandAssetBytes, and bytes that sniff (WHATWG MIME
// sniffing, net/http) as the declared type (else 422 asset_type_mismatch).
func CheckBrandAsset(kind, declared string, content []byte) (NewBrandAsset, error) {
	mt, _, err := mime.ParseMediaType(declared)
	switch {
	case kind != AssetKindLogo && kind != AssetKindFavicon:
		return NewBrandAsset{}, Invalid("kind", CodeValidationFailed, "kind is logo or favicon")
	case err != nil || !slices.Contains(BrandAssetTypes, mt):
		return NewBrandAsset{}, Invalid("Content-Type", CodeValidationFailed, "send one of %s",
			strings.Join(BrandAssetTypes, ", "))
	case len(content) > MaxBrandAssetBytes:
		return NewBrandAsset{}, Invalid("body", CodeValidationFailed, "an asset is at most %d bytes", MaxBrandAssetBytes)
	}
	if sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(content)); sniffed != mt {
		return NewBrandAsset{}, Invalid("body", CodeAssetTypeMismatch,
			"the content is not %s (it looks like %s)", mt, sniffed)
	}
	sum := sha256.Sum256(content)
	return NewBrandAsset{Kind: kind, ContentType: mt, Content: content, SHA256: sum[:]}, nil
}

// BrandAssetFilter narrows the asset list.
type BrandAssetFilter struct {
	Kind []string `json:"kind,omitempty"` // any of these kinds
}

// Brands keeps the brand and its assets. ReplaceBrand locks the brand,
// checks preconditions, read-only members and asset references, and
// records one event when something changed (version + 1); a replace that
// changes nothing writes nothing. CreateBrandAsset records one event
// without the bytes.
type Brands interface {
	GetBrand(ctx context.Context) (Brand, error)
	ReplaceBrand(ctx context.Context, a Actor, r BrandReplace) (Brand, error)
	ListBrandAssets(ctx context.Context, f BrandAssetFilter, q PageQuery) (Page[BrandAsset], error)
	GetBrandAsset(ctx context.Context, id int64) (*BrandAsset, error)
	BrandAssetContent(ctx context.Context, id int64) (*BrandAsset, []byte, error)
	CreateBrandAsset(ctx context.Context, a Actor, n NewBrandAsset, l *Lease) (BrandAsset, error)
}

// RecoveryBrandAssetCreated is the recovery point of a keyed asset upload.
const RecoveryBrandAssetCreated = "brand_asset_created"

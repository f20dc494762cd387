package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/licencetest"
)

func licencePayload(e *apitest.Env) resources.LicencePayload {
	return licencetest.Payload(e.InstallationID(), e.Clock.Now())
}

func testImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	return img
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testImage()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// icoBytes is an icon file's header (one 16x16 image) and filler.
func icoBytes() []byte {
	return append([]byte{0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0}, bytes.Repeat([]byte{0}, 64)...)
}

// webpBytes is a WebP file's RIFF header and filler.
func webpBytes() []byte {
	return append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), bytes.Repeat([]byte{0}, 32)...)
}

const svgBytes = `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`

func upload(e *apitest.Env, tok, kind, contentType string, body []byte, headers ...string) *apitest.Response {
	e.T.Helper()
	return e.Do("POST", "/api/v1/brand/assets?kind="+kind, tok, string(body), append([]string{"Content-Type", contentType}, headers...)...)
}

func uploaded(t *testing.T, e *apitest.Env, tok, kind, contentType string, body []byte) map[string]any {
	t.Helper()
	r := upload(e, tok, kind, contentType, body)
	if r.Status != 201 {
		t.Fatalf("upload %s %s: %d %s", kind, contentType, r.Status, r.Body)
	}
	return r.JSON(t)
}

func TestBrandAssets_UploadReadDownload_SameBytesTypeNosniffAudited(t *testing.T) {
	e, tok := brandEnv(t)
	img := pngBytes(t)
	r := upload(e, tok, "logo", "image/png", img)
	a := r.JSON(t)
	sum := sha256.Sum256(img)
	if r.Status != 201 || r.Header.Get("Location") != "/api/v1/brand/assets/"+a["id"].(string) || a["created_at"] == nil {
		t.Fatalf("upload: %d %v %s", r.Status, r.Header, r.Body)
	}
	want := map[string]any{"id": a["id"], "kind": "logo", "content_type": "image/png", "size_bytes": float64(len(img)),
		"sha256": hex.EncodeToString(sum[:]), "created_at": a["created_at"]}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Fatalf("asset (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(a, e.Do("GET", "/api/v1/brand/assets/"+a["id"].(string), tok, nil).JSON(t)); diff != "" {
		t.Fatalf("GET metadata (-upload +get):\n%s", diff)
	}
	c := e.Do("GET", "/api/v1/brand/assets/"+a["id"].(string)+"/content", e.Token(resources.PermBrandRead), nil)
	got := map[string]string{"type": c.Header.Get("Content-Type"), "nosniff": c.Header.Get("X-Content-Type-Options")}
	if diff := cmp.Diff(map[string]string{"type": "image/png", "nosniff": "nosniff"}, got); diff != "" ||
		c.Status != 200 || !bytes.Equal(c.Body, img) {
		t.Fatalf("download %d (-want +got):\n%s", c.Status, diff)
	}
	ev, _ := auditItems(t, e, tok, "?action=brand_asset.create")
	after := ev[0]["after_state"].(map[string]any)
	if len(ev) != 1 || after["kind"] != "logo" || after["size_bytes"] != float64(len(img)) || after["content"] != nil {
		t.Fatalf("audit: %v", ev)
	}
	assertProblem(t, e.Do("GET", "/api/v1/brand/assets/999", tok, nil), 404, "brand_asset_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/brand/assets/999/content", tok, nil), 404, "brand_asset_not_found")
}

func TestBrandAssets_EveryAcceptedTypeAndKindFilter(t *testing.T) {
	e, tok := brandEnv(t)
	uploaded(t, e, tok, "logo", "image/png", pngBytes(t))
	uploaded(t, e, tok, "logo", "image/jpeg", jpegBytes(t))
	uploaded(t, e, tok, "logo", "image/webp", webpBytes())
	uploaded(t, e, tok, "favicon", "image/x-icon", icoBytes())
	kinds := func(query string) []string {
		var out []string
		for _, it := range e.Do("GET", "/api/v1/brand/assets"+query, tok, nil).JSON(t)["items"].([]any) {
			m := it.(map[string]any)
			out = append(out, m["kind"].(string)+":"+m["content_type"].(string))
		}
		return out
	}
	all := []string{"logo:image/png", "logo:image/jpeg", "logo:image/webp", "favicon:image/x-icon"}
	if diff := cmp.Diff(all, kinds("")); diff != "" {
		t.Fatalf("list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"favicon:image/x-icon"}, kinds("?kind=favicon")); diff != "" {
		t.Fatalf("kind filter (-want +got):\n%s", diff)
	}
}

func TestBrandAssets_Refusals_SVGWrongBytesSizeKind(t *testing.T) {
	e, tok := brandEnv(t)
	big := append(pngBytes(t), bytes.Repeat([]byte{0}, resources.MaxBrandAssetBytes)...)
	exact := append(pngBytes(t), bytes.Repeat([]byte{0}, resources.MaxBrandAssetBytes-len(pngBytes(t)))...)
	for name, tc := range map[string]struct {
		kind, contentType string
		body              []byte
		status            int
		code              string
	}{
		"svg":                 {"logo", "image/svg+xml", []byte(svgBytes), 415, "unsupported_media_type"},
		"svg declared as png": {"logo", "image/png", []byte(svgBytes), 422, "asset_type_mismatch"},
		"jpeg declared png":   {"logo", "image/png", jpegBytes(t), 422, "asset_type_mismatch"},
		"html declared ico":   {"favicon", "image/x-icon", []byte("<html><body>hi</body></html>"), 422, "asset_type_mismatch"},
		"empty":               {"logo", "image/png", nil, 422, "malformed_body"},
		"json":                {"logo", "application/json", []byte(`{}`), 415, "unsupported_media_type"},
		"no Content-Type":     {"logo", "", pngBytes(t), 415, "unsupported_media_type"},
		"octet-stream":        {"logo", "application/octet-stream", pngBytes(t), 415, "unsupported_media_type"},
		"over 1 MiB":          {"logo", "image/png", big, 413, "body_too_large"},
		"unknown kind":        {"banner", "image/png", pngBytes(t), 400, "invalid_parameter"},
	} {
		t.Run(name, func(t *testing.T) {
			assertProblem(t, upload(e, tok, tc.kind, tc.contentType, tc.body), tc.status, tc.code)
		})
	}
	assertProblem(t, e.Do("POST", "/api/v1/brand/assets", tok, string(pngBytes(t)), "Content-Type", "image/png"), 400, "invalid_parameter")
	if n := count(t, e, "SELECT count(*) FROM brand_assets"); n != 0 {
		t.Fatalf("%d assets stored by refused uploads", n)
	}
	if a := uploaded(t, e, tok, "logo", "image/png", exact); a["size_bytes"] != float64(resources.MaxBrandAssetBytes) {
		t.Fatalf("exactly 1 MiB: %v", a)
	}
}

func TestBrandAssets_KeyedUploadStoredOnceReplayed(t *testing.T) {
	e, tok := brandEnv(t)
	first := upload(e, tok, "logo", "image/png", pngBytes(t), "Idempotency-Key", "logo-1")
	again := upload(e, tok, "logo", "image/png", pngBytes(t), "Idempotency-Key", "logo-1")
	if first.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, again.Body) {
		t.Fatalf("keyed upload: %d %s / %s", first.Status, first.Body, again.Body)
	}
	assertProblem(t, upload(e, tok, "logo", "image/png", jpegBytes(t), "Idempotency-Key", "logo-1"), 409, "idempotency_key_reused")
	if n := count(t, e, "SELECT count(*) FROM brand_assets"); n != 1 {
		t.Fatalf("%d assets", n)
	}
}

func TestBrand_FaviconMustBeAFaviconNullClears(t *testing.T) {
	e, tok := brandEnv(t)
	logo := uploaded(t, e, tok, "logo", "image/png", pngBytes(t))["id"]
	fav := uploaded(t, e, tok, "favicon", "image/x-icon", icoBytes())["id"]
	m := assertProblem(t, putBrand(e, tok, brandPut("#000000", nil, logo)), 422, "brand_asset_invalid")
	if m["field"] != "favicon_asset_id" || !strings.Contains(m["detail"].(string), "is a logo") {
		t.Fatalf("logo as favicon: %v", m)
	}
	assertProblem(t, putBrand(e, tok, brandPut("#000000", fav, nil)), 422, "brand_asset_invalid")
	set := putBrand(e, tok, brandPut("#000000", logo, fav)).JSON(t)
	if set["logo_asset_id"] != logo || set["favicon_asset_id"] != fav {
		t.Fatalf("set: %v", set)
	}
	cleared := putBrand(e, tok, brandPut("#000000", logo, nil)).JSON(t)
	if cleared["favicon_asset_id"] != nil || cleared["logo_asset_id"] != logo || cleared["version"] != 3.0 {
		t.Fatalf("cleared: %v", cleared)
	}
}

// TestBrandAssets_OpenAPI_MetadataDescriptionPromisesOnlyItsMembers: the
// served description of get-brand-asset names no member the answer lacks
// (it promised dimensions, which no asset record carries).
func TestBrandAssets_OpenAPI_MetadataDescriptionPromisesOnlyItsMembers(t *testing.T) {
	e, _ := brandEnv(t)
	if d := servedDescription(t, e, "get", "/brand/assets/{asset_id}"); strings.Contains(d, "dimension") {
		t.Fatalf("get-brand-asset: %q", d)
	}
}

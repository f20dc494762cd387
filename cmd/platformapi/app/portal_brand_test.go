package app

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"platformapi/resources"
)

// TestPortalBrand_ColourAndLogo: the style sheet carries the brand's
// colour (the brand's default on a new installation) and no logo is shown
// until the brand sets one; after a change of colour and logo the style
// sheet follows and /portal/logo serves the logo asset, which every page
// shows.
func TestPortalBrand_ColourAndLogo(t *testing.T) {
	w := startPortal(t, false, false)
	if css := w.get("/portal/style.css"); !strings.Contains(css, "--brand: #2563eb;") {
		t.Fatalf("the default style sheet:\n%s", css)
	}
	if res, _ := w.do(http.MethodGet, w.url+"/portal/logo", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the logo without one set: %d", res.StatusCode)
	}
	if strings.Contains(w.page(), `class="logo"`) {
		t.Fatal("a logo is shown while none is set")
	}
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	asset, err := w.m.store.CreateBrandAsset(t.Context(), resources.Actor{Label: "ops:test"},
		resources.NewBrandAsset{Kind: "logo", ContentType: "image/png", Content: b.Bytes(), SHA256: sum[:]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.m.db.ExecContext(t.Context(), "UPDATE brand SET brand_color = '#aa3300', logo_asset_id = ?",
		asset.ID); err != nil {
		t.Fatal(err)
	}
	if css := w.get("/portal/style.css"); !strings.Contains(css, "--brand: #aa3300;") {
		t.Fatalf("the style sheet does not carry the brand colour:\n%s", css)
	}
	res, logo := w.do(http.MethodGet, w.url+"/portal/logo", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" || logo != b.String() {
		t.Fatalf("the logo: %d %s (%d bytes)", res.StatusCode, res.Header.Get("Content-Type"), len(logo))
	}
	if !strings.Contains(w.page(), `<img class="logo" src="/portal/logo" alt="">`) {
		t.Fatal("the pages do not show the logo")
	}
}

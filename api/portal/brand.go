package portal

import (
	"bytes"
	"errors"
	"net/http"
	"regexp"

	"platformapi/resources"
)

// errNoStore is returned by reads when the portal was built without a store.
var errNoStore = errors.New("portal: no store configured")

// brand reads the installation's brand.
func (h *Handler) brand(r *http.Request) (resources.Brand, error) {
	if h.cfg.Store == nil {
		return resources.Brand{}, errNoStore
	}
	return h.cfg.Store.GetBrand(r.Context())
}

// brandColor is the form of a brand colour the style sheet takes as is.
var brandColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// style serves the style sheet in the installation's brand colour (the
// default blue while none is set).
func (h *Handler) style(w http.ResponseWriter, r *http.Request) {
	css, _ := static.ReadFile("static/style.css")
	if b, err := h.brand(r); err == nil && brandColor.MatchString(b.BrandColor) {
		css = bytes.Replace(css, []byte("--brand: #1f5fbf;"), []byte("--brand: "+b.BrandColor+";"), 1)
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(css)
}

// script serves the copy button's script.
func (h *Handler) script(w http.ResponseWriter, _ *http.Request) {
	js, _ := static.ReadFile("static/copy.js")
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	_, _ = w.Write(js)
}

// logo serves the installation's logo; 404 while none is set.
func (h *Handler) logo(w http.ResponseWriter, r *http.Request) {
	b, err := h.brand(r)
	if err != nil || b.LogoAssetID == nil {
		http.NotFound(w, r)
		return
	}
	a, content, err := h.cfg.Store.BrandAssetContent(r.Context(), *b.LogoAssetID)
	if err != nil || a == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ContentType)
	_, _ = w.Write(content)
}

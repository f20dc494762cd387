package portal

import (
	"embed"
	"errors"
	"html/template"
	"net/http"
	"slices"
	"time"

	"platformapi/resources"
)

// templates holds the pages (html/template: every value is escaped for its
// context); static holds the style sheet and the copy button's script.
var (
	//go:embed templates/*.html
	templates embed.FS
	//go:embed static/style.css static/copy.js
	static embed.FS
)

// pages are the portal's server-rendered pages: usable without script; the
// only script (static/copy.js) adds a copy button beside a token's value.
var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"contains": slices.Contains[[]string],
	"rows":     newTokenRows,
}).ParseFS(templates, "templates/*.html"))

// templateName names one of the portal's pages.
type templateName string

const (
	indexTemplate   templateName = "index"
	refusalTemplate templateName = "refusal"
	tokensTemplate  templateName = "tokens"
	mintedTemplate  templateName = "minted"
	// mintedAgainTemplate answers a resubmitted create form.
	mintedAgainTemplate templateName = "minted-again"
	approvalsTemplate   templateName = "approvals"
	adminTemplate       templateName = "admin"
	demoLoginTemplate   templateName = "demo-login"
)

// view is what every page shows: the layout's parts and the page's own
// data (Page).
type view struct {
	Title  string
	Person *resources.Session // the signed-in person, if any
	Admin  bool               // the person holds admin: the Administration page
	// Releases: the person holds a key of approvalReaders: the Approvals page.
	Releases bool
	Brand    brandView
	Notice   string // what the last action did
	Problem  string // why the last action was refused
	// RequestID is the request's id on a refusal or fault page, for the
	// person to quote to an administrator ("" on other pages).
	RequestID string
	Page      any
}

// brandView is what the layout needs of the installation's brand.
type brandView struct {
	Logo bool // a logo is set: /portal/logo serves it
}

// indexPage is the front page's own data.
type indexPage struct {
	Configured bool // sign-in with OpenID Connect is configured
	Demo       bool // demo mode: link the demo sign-in
}

// render writes the page t for v, filling the layout's brand.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, t templateName, v view) {
	if r != nil { // nil: a refusal, shown plain
		if b, err := h.brand(r); err == nil {
			v.Brand = brandView{Logo: b.LogoAssetID != nil}
		}
	}
	if v.Person != nil {
		v.Admin = slices.Contains(v.Person.Permissions, resources.PermAdmin)
		v.Releases = resources.HasAny(v.Person.Permissions, approvalReaders)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, string(t), v); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		h.cfg.Logger.Error("portal: rendering a page", "page", t, "error", err)
	}
}

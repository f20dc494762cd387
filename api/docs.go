package api

import (
	"embed"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// The docs page's renderer, Stoplight Elements, vendored from the npm
// package @stoplight/elements by docsui/update.sh. Its integrity hashes are
// checked by the browser (SRI) and by a test against the embedded bytes.
const (
	elementsVersion      = "9.0.25"
	elementsJSIntegrity  = "sha384-X5kH2B8aH81JEl8IfSBwwnr8FYcCqMzdxpqjmmlRbhIl7SsQ9Zn0xk+csQmU37zN"
	elementsCSSIntegrity = "sha384-NzdOiocfnINlXfuCXi4OpL/xvdbgLiKaLHQ07Z+IwhVaxHqLShn5rVD5OHt/LYgz"
)

//go:embed docsui/elements/web-components.min.js docsui/elements/styles.min.css
var elementsFiles embed.FS

// docsAssetsPath is where the renderer's files are served, versioned so
// they can be cached for good.
const docsAssetsPath = Prefix + "/docs/elements-" + elementsVersion + "/"

// docsAssets are the files served under docsAssetsPath with their types.
var docsAssets = map[string]string{
	"web-components.min.js": "text/javascript; charset=utf-8",
	"styles.min.css":        "text/css; charset=utf-8",
}

// docsCSP lets the page load nothing but this server's own files.
var docsCSP = strings.Join([]string{
	"default-src 'none'", "base-uri 'none'", "connect-src 'self'", "form-action 'none'",
	"frame-ancestors 'none'", "img-src 'self' data:", "font-src 'self' data:",
	"script-src 'self'", "style-src 'self' 'unsafe-inline'",
}, "; ")

// docsPage is the interactive reference: Elements served by this binary,
// the contract from this server, and a link to it without JavaScript.
var docsPage = []byte(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Cloud Platform Management API Reference</title>
    <link rel="stylesheet" href="` + docsAssetsPath + `styles.min.css" integrity="` + elementsCSSIntegrity + `">
    <script src="` + docsAssetsPath + `web-components.min.js" integrity="` + elementsJSIntegrity + `"></script>
  </head>
  <body style="height: 100vh;">
    <noscript>
      <p>The interactive reference needs JavaScript. The contract it shows is
      <a href="` + Prefix + `/openapi.json">` + Prefix + `/openapi.json</a>
      (also as <a href="` + Prefix + `/openapi.yaml">YAML</a>).</p>
    </noscript>
    <elements-api apiDescriptionUrl="` + Prefix + `/openapi.json" router="hash" layout="sidebar"
      tryItCredentialsPolicy="same-origin"></elements-api>
  </body>
</html>
`)

// registerDocs mounts the docs page and its assets on the /api/v1 router
// (behind the API switch like every /api/v1 path).
func (s *Server) registerDocs(r chi.Router) {
	r.Get("/docs", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", docsCSP)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(docsPage)
	})
	r.Get("/docs/elements-"+elementsVersion+"/{file}", func(w http.ResponseWriter, r *http.Request) {
		noteOperation(r.Context(), "docs-asset") // not the pattern: it names the assets' version
		name := chi.URLParam(r, "file")
		ct, ok := docsAssets[name]
		b, err := elementsFiles.ReadFile("docsui/elements/" + name)
		if !ok || err != nil {
			s.notFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(b)
	})
}

package portal

import (
	"html/template"

	"platformapi/resources"
)

// templateName names one of the portal's pages.
type templateName string

const (
	indexTemplate   templateName = "index"
	refusalTemplate templateName = "refusal"
)

// indexPage is what the portal's front page shows.
type indexPage struct {
	Configured bool               // sign-in with OpenID Connect is configured
	Person     *resources.Session // the signed-in person, if any
	Demo       bool               // demo mode: link the demo sign-in
}

// refusalPage is a plain page saying why a request was refused.
type refusalPage struct {
	Message string
}

// pages are the portal's server-rendered pages (no script, no style).
var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>platformapi portal</title></head><body>
<h1>platformapi portal</h1>{{end}}
{{define "index"}}{{template "head"}}
{{with .Person}}<p>Signed in as <strong>{{.DisplayName}}</strong> ({{.Email}}).</p>
<form method="post" action="/portal/logout"><button type="submit">Sign out</button></form>
{{else}}{{if .Configured}}<p><a href="/portal/login">Sign in</a></p>
{{else}}<p>Sign-in is not configured on this server.</p>{{end}}{{end}}
{{if .Demo}}<p><a href="/portal/demo-login">Demo sign-in</a> (demo mode: pick a demo person)</p>{{end}}
</body></html>{{end}}
{{define "refusal"}}{{template "head"}}
<p>{{.Message}}</p>
<p><a href="/portal/">Back to the portal</a></p>
</body></html>{{end}}
`))

package portal

import (
	"html/template"
	"net/http"

	"platformapi/resources"
)

// demoPeopleMax bounds the demo sign-in's list (the demo world has a handful
// of people).
const demoPeopleMax = 100

// demoFormMax bounds the demo sign-in's form body.
const demoFormMax = 4 << 10

const demoLoginTemplate templateName = "demo-login"

// demoLoginPage lists the people one may sign in as in demo mode.
type demoLoginPage struct {
	People []resources.User
}

// The demo sign-in's page: one button per active person, each a form
// posting the person's e-mail (no script, like every portal page).
var _ = template.Must(pages.New(string(demoLoginTemplate)).Parse(`{{template "head"}}
<h2>Demo sign-in</h2>
<p>This server runs in demo mode (<code>serve --demo</code>): sign in as any active person of the demo
world, without the identity provider. This page does not exist outside demo mode.</p>
<table><thead><tr><th>Name</th><th>E-mail</th><th>Roles</th><th></th></tr></thead><tbody>
{{range .People}}<tr><td>{{.DisplayName}}</td><td>{{.Email}}</td>
<td>{{range $i, $r := .Roles}}{{if $i}}, {{end}}{{$r}}{{end}}</td>
<td><form method="post" action="/portal/demo-login"><input type="hidden" name="email" value="{{.Email}}">
<button type="submit">Sign in as {{.DisplayName}}</button></form></td></tr>
{{else}}<tr><td colspan="4">No active person.</td></tr>{{end}}
</tbody></table>
<p><a href="/portal/">Back to the portal</a></p>
</body></html>`))

// demoRoutes adds the demo sign-in, in demo mode only (Config.DemoPeople
// set); elsewhere its path is unknown (404).
func (h *Handler) demoRoutes(mux *http.ServeMux) {
	if h.cfg.DemoPeople == nil {
		return
	}
	mux.HandleFunc("GET /portal/demo-login", labelled("portal-demo-login", h.demoPeople))
	mux.HandleFunc("POST /portal/demo-login", labelled("portal-demo-sign-in", h.demoSignIn))
}

// demoPeople lists the active people with a sign-in button each.
func (h *Handler) demoPeople(w http.ResponseWriter, r *http.Request) {
	pg, err := h.cfg.DemoPeople.ListUsers(r.Context(),
		resources.UserFilter{Status: []string{"active"}}, resources.PageQuery{Limit: demoPeopleMax})
	if err != nil {
		h.fault(w, r, "listing the demo people", err)
		return
	}
	h.render(w, http.StatusOK, demoLoginTemplate, demoLoginPage{People: pg.Items})
}

// demoSignIn signs in the person of the form's e-mail the way a verified
// sign-in with the identity provider does (new session id, the browser's
// previous session ended, audited as session.sign_in); an unknown or
// deactivated person is refused.
func (h *Handler) demoSignIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, demoFormMax)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, http.StatusBadRequest, "This form could not be read.")
		return
	}
	h.startSession(w, r, r.PostForm.Get("email"))
}

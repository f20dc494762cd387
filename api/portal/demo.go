package portal

import (
	"net/http"

	"platformapi/resources"
)

// demoPeopleMax bounds the demo sign-in's list (the demo world has a handful
// of people).
const demoPeopleMax = 100

// demoFormMax bounds the demo sign-in's form body (formLimits).
const demoFormMax = 4 << 10

// demoRoutes adds the demo sign-in, in demo mode only (Config.Demo);
// elsewhere its path is unknown (404).
func (h *Handler) demoRoutes(mux *http.ServeMux) {
	if !h.cfg.Demo {
		return
	}
	h.handle(mux, "GET /portal/demo-login", labelled("portal-demo-login", h.demoPeople),
		"`serve --demo` only (404 otherwise): the demo world's active people, "+
			"each with a Sign in as button")
	h.handle(mux, "POST /portal/demo-login", labelled("portal-demo-sign-in", h.demoSignIn),
		"`serve --demo` only: signs in as the posted `email`, the same session "+
			"and audit row as a real sign-in")
}

// demoPeople lists the active people with a sign-in button each.
func (h *Handler) demoPeople(w http.ResponseWriter, r *http.Request) {
	pg, err := h.cfg.Store.ListUsers(r.Context(),
		resources.UserFilter{Status: []string{"active"}}, resources.PageQuery{Limit: demoPeopleMax})
	if err != nil {
		h.fault(w, r, "listing the demo people", err)
		return
	}
	h.render(w, r, http.StatusOK, demoLoginTemplate, view{Title: "Demo sign-in", Page: pg.Items})
}

// demoSignIn signs in the person of the form's e-mail the way a verified
// sign-in with the identity provider does (new session id, the browser's
// previous session ended, audited as session.sign_in); an unknown or
// deactivated person is refused.
func (h *Handler) demoSignIn(w http.ResponseWriter, r *http.Request) {
	h.startSession(w, r, r.PostForm.Get("email")) // read within demoFormMax (readForm)
}

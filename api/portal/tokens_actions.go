package portal

import (
	"net/http"
	"strings"

	"platformapi/resources"
)

// revokeToken stops a token at once (one's own; another's with
// api-tokens-admin-global).
func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, p resources.Session) {
	id, err := pathID(r, resources.CodeAPITokenNotFound)
	if err == nil {
		if _, err = h.cfg.Actions.RevokeToken(r.Context(), actingAs(r, p), id); err == nil {
			done(w, r, Path+"tokens", "token-revoked")
			return
		}
	}
	h.refused(w, r, p, "revoking a token", err,
		h.tokensPage(w, r, p, tokenRefusal{Doing: "Revoking", ID: id}))
}

// extendToken sets a token's expiry to the posted days from now (needs
// api-tokens-admin-global).
func (h *Handler) extendToken(w http.ResponseWriter, r *http.Request, p resources.Session) {
	id, err := pathID(r, resources.CodeAPITokenNotFound)
	var days int
	if err == nil {
		days, err = formDays(r.PostFormValue("days"))
	}
	if err == nil {
		if _, err = h.cfg.Actions.ExtendToken(r.Context(), actingAs(r, p), id, days); err == nil {
			done(w, r, Path+"tokens", "token-extended")
			return
		}
	}
	h.refused(w, r, p, "extending a token", err,
		h.tokensPage(w, r, p, tokenRefusal{Doing: "Extending", ID: id, Days: r.PostFormValue("days")}))
}

// createServiceAccount creates a service account with keys the person
// holds (needs api-tokens-admin-global).
func (h *Handler) createServiceAccount(w http.ResponseWriter, r *http.Request, p resources.Session) {
	err := r.ParseForm()
	if err != nil {
		err = errUnreadableForm
	} else {
		sa := resources.NewServiceAccount{Name: strings.TrimSpace(r.PostForm.Get("name")),
			Description: strings.TrimSpace(r.PostForm.Get("description")), Permissions: r.PostForm["permissions"]}
		_, err = h.cfg.Actions.CreateServiceAccount(r.Context(), actingAs(r, p), sa)
	}
	if err == nil {
		done(w, r, Path+"tokens", "account-created")
		return
	}
	h.refused(w, r, p, "creating a service account", err, func(status int, v view) {
		h.showTokensWith(w, r, p, status, v, func(pg *tokensPage) { pg.Account = r.PostForm })
	})
}

// tokensPage shows the tokens page again (with an empty mint form) after
// the refused action on one token: the problem names the token, an
// Extend's days stay in its row.
func (h *Handler) tokensPage(w http.ResponseWriter, r *http.Request, p resources.Session,
	refused tokenRefusal) func(int, view) {
	return func(status int, v view) {
		h.showTokensWith(w, r, p, status, v, func(pg *tokensPage) { pg.Refused = refused })
	}
}

// showTokensWith renders the tokens page with an empty mint form; refill,
// when set, puts a refused form's values into the page.
func (h *Handler) showTokensWith(w http.ResponseWriter, r *http.Request, p resources.Session,
	status int, v view, refill func(*tokensPage)) {
	h.showTokensPage(w, r, p, status, v, tokenForm{Days: resources.TokenDefaultDays}, refill)
}

package portal

import (
	"net/http"
	"strconv"
	"strings"

	"platformapi/resources"
)

// pathID reads the {id} of an action's path, a positive integer; anything
// else is no such thing (code).
func pathID(r *http.Request, code string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, resources.NotFound(code, "there is nothing with id %q", r.PathValue("id"))
	}
	return id, nil
}

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
	h.refused(w, r, p, "revoking a token", err, func(status int, v view) {
		h.showTokens(w, r, p, status, v, tokenForm{Days: resources.TokenDefaultDays})
	})
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
	h.refused(w, r, p, "extending a token", err, func(status int, v view) {
		h.showTokens(w, r, p, status, v, tokenForm{Days: resources.TokenDefaultDays})
	})
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
		h.showTokens(w, r, p, status, v, tokenForm{Days: resources.TokenDefaultDays})
	})
}

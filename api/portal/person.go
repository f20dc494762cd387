package portal

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"platformapi/resources"
)

// Store is what the portal's pages read, and the release decisions and
// licence installation they make (each audited with the signed-in person).
type Store interface {
	ListTokens(ctx context.Context, f resources.TokenFilter, q resources.PageQuery) (
		resources.Page[resources.APIToken], error)
	ListServiceAccounts(ctx context.Context, q resources.PageQuery) (resources.Page[resources.ServiceAccount], error)
	ListFleetReleaseOperations(ctx context.Context, f resources.ReleaseFilter, q resources.PageQuery) (
		resources.Page[resources.ReleaseOperation], error)
	ReleaseState(ctx context.Context, projectID int64) (*resources.ReleaseState, error)
	ApproveRelease(ctx context.Context, by resources.Actor, id int64, note string) (resources.ReleaseOperation, error)
	RejectRelease(ctx context.Context, by resources.Actor, id int64, reason string) (resources.ReleaseOperation, error)
	ListUsers(ctx context.Context, f resources.UserFilter, q resources.PageQuery) (resources.Page[resources.User], error)
	Settings(ctx context.Context) (resources.Settings, error)
	GetBrand(ctx context.Context) (resources.Brand, error)
	BrandAssetContent(ctx context.Context, id int64) (*resources.BrandAsset, []byte, error)
	StoredLicence(ctx context.Context) (resources.StoredLicence, error)
	InstallLicenceAs(ctx context.Context, by resources.Actor, bundle string, p resources.LicencePayload) (
		resources.StoredLicence, error)
}

// routePages registers the pages of signed-in people and their actions.
func (h *Handler) routePages(mux *http.ServeMux) {
	h.routeTokens(mux)
	h.routeApprovals(mux)
	h.routeAdmin(mux)
}

// personHandler serves a page for the signed-in person p.
type personHandler func(w http.ResponseWriter, r *http.Request, p resources.Session)

// signedIn serves next for a signed-in person; anyone else is sent to the
// front page, which says to sign in (a form post is refused: nothing is
// done). A session the store cannot read answers the fault page.
func (h *Handler) signedIn(id string, next personHandler) http.HandlerFunc {
	return labelled(id, func(w http.ResponseWriter, r *http.Request) {
		p, ok, err := h.session(w, r)
		switch {
		case err != nil:
			h.fault(w, r, "reading a session", err)
		case ok:
			next(w, r, p)
		case r.Method == http.MethodGet:
			done(w, r, Path, "sign-in-first")
		default:
			h.refuse(w, r, http.StatusForbidden,
				"Your session has ended: sign in again, then repeat the action.")
		}
	})
}

// actingAs is the audit actor of p's action in r: the person, the request
// id and the client's address.
func actingAs(r *http.Request, p resources.Session) resources.Actor {
	a := actorOf(r)
	a.Label = p.Email
	return a
}

// notices are what a page says after an action, by key: fixed texts, so a
// crafted link cannot make the portal say anything else.
var notices = map[string]string{
	"token-revoked":     "The token is revoked: it stops working at once, on every replica.",
	"token-extended":    "The token's expiry is extended.",
	"account-created":   "The service account is created; mint its first token below.",
	"approved":          "The promotion is approved: the pipeline deploys it now.",
	"rejected":          "The promotion is rejected: its operation ended as failed with your reason.",
	"api-enabled":       "The API and MCP are on.",
	"api-disabled":      "The API and MCP are off: every /api/v1 path and /mcp answer 404.",
	"user-created":      "The person is created: they can sign in with that e-mail address.",
	"role-created":      "The role is created; give it to people below.",
	"role-granted":      "The role is granted (effective on the person's next request).",
	"role-revoked":      "The role is taken away (effective on the person's next request).",
	"role-already-held": "Nothing changed: the person already holds that role.",
	"role-not-held":     "Nothing changed: the person does not hold that role.",
	"licence-installed": "The licence is installed.",
	"signed-out":        "You are signed out.",
	"sign-in-first": "Sign in to open that page: you are not signed in, or your session " +
		"has ended.",
}

// done sends the browser back to page with the notice under key (PRG: a
// reload does not repeat the action).
func done(w http.ResponseWriter, r *http.Request, page, key string) {
	http.Redirect(w, r, page+"?done="+url.QueryEscape(key), http.StatusSeeOther)
}

// notice is the fixed text of the request's ?done= key, if any.
func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

// problemText is what a page says of a refused action: the rule's own
// words for a domain refusal; ok=false for any other failure (a fault).
func problemText(err error) (string, bool) {
	if e, ok := resources.AsError(err); ok && e.Kind != resources.KindInternal {
		msg := e.Detail
		if e.Remedy != "" && !strings.HasSuffix(msg, ".") {
			msg += "." // the detail is a clause; the remedy a sentence after it
		}
		if e.Remedy != "" {
			msg += " " + e.Remedy
		}
		return msg, true
	}
	return "", false
}

// pathID reads the {id} of an action's path, a positive integer; anything
// else is no such thing (code).
func pathID(r *http.Request, code string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, resources.NotFound(code, "there is nothing with id %q", r.PathValue("id"))
	}
	return id, nil
}

// refused shows a domain refusal of an action on its page (422 for a bad
// form, 403 for a missing permission, 409 for a conflict); other failures
// answer the fault page.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, p resources.Session, doing string, err error,
	show func(status int, v view)) {
	msg, ok := problemText(err)
	if !ok {
		h.fault(w, r, doing, err)
		return
	}
	status := http.StatusUnprocessableEntity
	if e, _ := resources.AsError(err); e != nil {
		switch e.Kind {
		case resources.KindForbidden:
			status = http.StatusForbidden
		case resources.KindConflict:
			status = http.StatusConflict
		case resources.KindNotFound:
			status = http.StatusNotFound
		case resources.KindUnavailable:
			status = http.StatusServiceUnavailable
		}
	}
	show(status, view{Problem: msg})
}

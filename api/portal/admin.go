package portal

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"platformapi/resources"
)

// adminPage is the Administration page: the API switch, people and roles,
// the licence.
type adminPage struct {
	Settings resources.Settings
	Users    []resources.User
	MoreUser bool // more than listLimit people: the rest are not shown
	Roles    []resources.Role
	Licence  resources.Licence
	Remedy   string                 // what the licence's state asks of an operator
	Keys     []resources.Permission // the catalogue, for the new role form
	Form     postedForm             // a refused form as posted, to refill it
}

// postedForm is a refused form of the page as posted: Path names its action
// ("users", "roles"); the other forms stay empty, and a licence bundle is
// never put back (a licence is a secret the server does not send).
type postedForm struct {
	Path   string
	Values url.Values
}

// For is the posted values when path is the refused form's, else none.
func (f postedForm) For(path string) url.Values {
	if f.Path != path {
		return nil
	}
	return f.Values
}

// routeAdmin registers the Administration page and its actions.
func (h *Handler) routeAdmin(mux *http.ServeMux) {
	h.handle(mux, "GET /portal/admin", h.signedIn("portal-admin", h.admin),
		"**Administration** (`admin`): the API switch, people and their roles, "+
			"new person, new role, the licence")
	for _, a := range []struct {
		path, id, doing, doc string
		act                  func(*http.Request, resources.Actor, url.Values) (string, error)
	}{
		{"api", "portal-api-switch", "switching the API", "turns the API and MCP on or off (`enabled`)",
			h.switchAPI},
		{"roles/grant", "portal-role-grant", "giving a role", "gives the person `email` the `role` " +
			"(held already: nothing changes, and the page says so)", h.changeRole(true)},
		{"roles/revoke", "portal-role-revoke", "taking a role", "takes the `role` from the person " +
			"`email` (not held: nothing changes, and the page says so)", h.changeRole(false)},
		{"licence", "portal-licence-install", "installing a licence",
			"verifies and installs a licence `bundle` (`licence-admin-global` or `admin`)", h.installLicence},
		{"users", "portal-user-create", "creating a person", "creates a person (`email`, `name`, `roles`)",
			h.createUser},
		{"roles", "portal-role-create", "creating a role",
			"creates a role (`name`, `description`, `permissions`)", h.createRole},
	} {
		act := h.adminAction(a.path, a.doing, a.act)
		h.handle(mux, "POST /portal/admin/"+a.path, h.signedIn(a.id, act), a.doc)
	}
}

// admin shows the page to administrators; others are told what it needs.
func (h *Handler) admin(w http.ResponseWriter, r *http.Request, p resources.Session) {
	h.showAdmin(w, r, p, http.StatusOK, view{Notice: notice(r)}, postedForm{})
}

// showAdmin renders the Administration page (403 without admin).
func (h *Handler) showAdmin(w http.ResponseWriter, r *http.Request, p resources.Session,
	status int, v view, form postedForm) {
	v.Title, v.Person = "Administration", &p
	if !slices.Contains(p.Permissions, resources.PermAdmin) {
		v.Problem = "The Administration page needs the permission admin; ask an administrator."
		h.render(w, r, http.StatusForbidden, refusalTemplate, v)
		return
	}
	pg, err := h.adminData(r)
	if err != nil {
		h.fault(w, r, "reading the administration page", err)
		return
	}
	pg.Form = form
	v.Page = pg
	h.render(w, r, status, adminTemplate, v)
}

// adminData reads what the Administration page shows.
func (h *Handler) adminData(r *http.Request) (adminPage, error) {
	var pg adminPage
	var err error
	ctx := r.Context()
	if pg.Settings, err = h.cfg.Store.Settings(ctx); err != nil {
		return pg, err
	}
	users, err := h.cfg.Store.ListUsers(ctx, resources.UserFilter{}, resources.PageQuery{Limit: listLimit})
	if err != nil {
		return pg, err
	}
	pg.Users, pg.MoreUser = users.Items, users.Next != nil
	if pg.Roles, err = h.cfg.Actions.ListRoles(ctx); err != nil {
		return pg, err
	}
	st, err := h.cfg.Store.StoredLicence(ctx)
	if err != nil {
		return pg, err
	}
	pg.Keys = resources.Permissions()
	pg.Licence = h.cfg.Licence.Evaluate(st, h.cfg.Now())
	pg.Remedy = pg.Licence.Remedy()
	return pg, nil
}

// errUnreadableForm refuses a form post whose body cannot be read.
var errUnreadableForm = resources.Invalid("form", resources.CodeValidationFailed, "the form could not be read")

// adminAction is an action of the Administration page: act runs with the
// posted form as the signed-in person and names the notice to show; the
// browser then goes back to the page, or sees it again with the rule's
// words and the form at path refilled when act is refused.
func (h *Handler) adminAction(path, doing string,
	act func(r *http.Request, by resources.Actor, form url.Values) (string, error)) personHandler {
	return func(w http.ResponseWriter, r *http.Request, p resources.Session) {
		key, err := "", r.ParseForm()
		if err != nil {
			err = errUnreadableForm
		} else {
			key, err = act(r, actingAs(r, p), r.PostForm)
		}
		if err != nil {
			h.refused(w, r, p, doing, err, func(status int, v view) {
				h.showAdmin(w, r, p, status, v, postedForm{Path: path, Values: r.PostForm})
			})
			return
		}
		done(w, r, Path+"admin", key)
	}
}

// switchAPI turns the API and MCP on or off (needs admin); enabled is
// "true" or "false", anything else changes nothing.
func (h *Handler) switchAPI(r *http.Request, by resources.Actor, form url.Values) (string, error) {
	e := form.Get("enabled")
	if e != "true" && e != "false" {
		return "", resources.Invalid("enabled", resources.CodeValidationFailed,
			"enabled must be true or false, got %q", e)
	}
	on := e == "true"
	_, err := h.cfg.Actions.SetAPIEnabled(r.Context(), by, on)
	return map[bool]string{true: "api-enabled", false: "api-disabled"}[on], err
}

// changeRole gives a person a role or takes it away (needs admin); a
// change that changes nothing (held already, not held) says so.
func (h *Handler) changeRole(grant bool) func(*http.Request, resources.Actor, url.Values) (string, error) {
	return func(r *http.Request, by resources.Actor, form url.Values) (string, error) {
		change, key, same := h.cfg.Actions.RevokeRole, "role-revoked", "role-not-held"
		if grant {
			change, key, same = h.cfg.Actions.GrantRole, "role-granted", "role-already-held"
		}
		email, role := strings.TrimSpace(form.Get("email")), strings.TrimSpace(form.Get("role"))
		rc, err := change(r.Context(), by, email, role)
		if err == nil && !rc.Changed {
			key = same
		}
		return key, err
	}
}

// installLicence verifies and installs a pasted bundle (needs
// licence-admin-global or admin).
func (h *Handler) installLicence(r *http.Request, by resources.Actor, form url.Values) (string, error) {
	bundle := strings.TrimSpace(form.Get("bundle"))
	if len(bundle) > resources.MaxLicenceBundleLen {
		return "", resources.Invalid("bundle", resources.CodeLicenceBundleInvalid, "the bundle is longer than %d bytes",
			resources.MaxLicenceBundleLen)
	}
	_, err := h.cfg.Licence.Install(r.Context(), h.cfg.Store, h.cfg.Store.InstallLicenceAs, by, bundle, h.cfg.Now())
	return "licence-installed", err
}

// createUser creates a person with roles (needs users-write-global or
// admin; only admins see the form).
func (h *Handler) createUser(r *http.Request, by resources.Actor, form url.Values) (string, error) {
	u := resources.NewUser{Email: strings.TrimSpace(form.Get("email")),
		DisplayName: strings.TrimSpace(form.Get("name")), Roles: form["roles"]}
	_, err := h.cfg.Actions.CreateUser(r.Context(), by, u)
	return "user-created", err
}

// createRole creates a role with permission keys (needs admin).
func (h *Handler) createRole(r *http.Request, by resources.Actor, form url.Values) (string, error) {
	role := resources.Role{Name: strings.TrimSpace(form.Get("name")),
		Description: strings.TrimSpace(form.Get("description")), Permissions: form["permissions"]}
	_, err := h.cfg.Actions.CreateRole(r.Context(), by, role)
	return "role-created", err
}

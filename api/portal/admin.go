package portal

import (
	"net/http"
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
}

// routeAdmin registers the Administration page and its actions.
func (h *Handler) routeAdmin(mux *http.ServeMux) {
	mux.HandleFunc("GET /portal/admin", h.signedIn("portal-admin", h.admin))
	mux.HandleFunc("POST /portal/admin/api", h.signedIn("portal-api-switch", h.switchAPI))
	mux.HandleFunc("POST /portal/admin/roles/grant", h.signedIn("portal-role-grant", h.changeRole(true)))
	mux.HandleFunc("POST /portal/admin/roles/revoke", h.signedIn("portal-role-revoke", h.changeRole(false)))
	mux.HandleFunc("POST /portal/admin/licence", h.signedIn("portal-licence-install", h.installLicence))
	mux.HandleFunc("POST /portal/admin/users", h.signedIn("portal-user-create", h.createUser))
	mux.HandleFunc("POST /portal/admin/roles", h.signedIn("portal-role-create", h.createRole))
}

// admin shows the page to administrators; others are told what it needs.
func (h *Handler) admin(w http.ResponseWriter, r *http.Request, p resources.Session) {
	h.showAdmin(w, r, p, http.StatusOK, view{Notice: notice(r)})
}

// showAdmin renders the Administration page (403 without admin).
func (h *Handler) showAdmin(w http.ResponseWriter, r *http.Request, p resources.Session, status int, v view) {
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

// switchAPI turns the API and MCP on or off (needs admin).
func (h *Handler) switchAPI(w http.ResponseWriter, r *http.Request, p resources.Session) {
	on := r.PostFormValue("enabled") == "true"
	if _, err := h.cfg.Actions.SetAPIEnabled(r.Context(), actingAs(r, p), on); err != nil {
		h.refused(w, r, p, "switching the API", err, func(status int, v view) { h.showAdmin(w, r, p, status, v) })
		return
	}
	done(w, r, Path+"admin", map[bool]string{true: "api-enabled", false: "api-disabled"}[on])
}

// changeRole gives a person a role or takes it away (needs admin).
func (h *Handler) changeRole(grant bool) personHandler {
	return func(w http.ResponseWriter, r *http.Request, p resources.Session) {
		change, key := h.cfg.Actions.RevokeRole, "role-revoked"
		if grant {
			change, key = h.cfg.Actions.GrantRole, "role-granted"
		}
		email, role := strings.TrimSpace(r.PostFormValue("email")), strings.TrimSpace(r.PostFormValue("role"))
		if _, err := change(r.Context(), actingAs(r, p), email, role); err != nil {
			h.refused(w, r, p, "changing a role", err, func(status int, v view) { h.showAdmin(w, r, p, status, v) })
			return
		}
		done(w, r, Path+"admin", key)
	}
}

// installLicence verifies and installs a pasted bundle (needs
// licence-admin-global or admin).
func (h *Handler) installLicence(w http.ResponseWriter, r *http.Request, p resources.Session) {
	bundle := strings.TrimSpace(r.PostFormValue("bundle"))
	var err error
	if len(bundle) > resources.MaxLicenceBundleLen {
		err = resources.Invalid("bundle", resources.CodeLicenceBundleInvalid, "the bundle is longer than %d bytes",
			resources.MaxLicenceBundleLen)
	} else {
		_, err = h.cfg.Licence.InstallAs(r.Context(), h.cfg.Store, actingAs(r, p), bundle, h.cfg.Now())
	}
	if err != nil {
		h.refused(w, r, p, "installing a licence", err, func(status int, v view) { h.showAdmin(w, r, p, status, v) })
		return
	}
	done(w, r, Path+"admin", "licence-installed")
}

// createUser creates a person with roles (needs users-write-global or
// admin; only admins see the form).
func (h *Handler) createUser(w http.ResponseWriter, r *http.Request, p resources.Session) {
	if err := r.ParseForm(); err != nil {
		h.refuse(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	u := resources.NewUser{Email: strings.TrimSpace(r.PostForm.Get("email")),
		DisplayName: strings.TrimSpace(r.PostForm.Get("name")), Roles: r.PostForm["roles"]}
	if _, err := h.cfg.Actions.CreateUser(r.Context(), actingAs(r, p), u); err != nil {
		h.refused(w, r, p, "creating a person", err, func(status int, v view) { h.showAdmin(w, r, p, status, v) })
		return
	}
	done(w, r, Path+"admin", "user-created")
}

// createRole creates a role with permission keys (needs admin).
func (h *Handler) createRole(w http.ResponseWriter, r *http.Request, p resources.Session) {
	if err := r.ParseForm(); err != nil {
		h.refuse(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	role := resources.Role{Name: strings.TrimSpace(r.PostForm.Get("name")),
		Description: strings.TrimSpace(r.PostForm.Get("description")), Permissions: r.PostForm["permissions"]}
	if _, err := h.cfg.Actions.CreateRole(r.Context(), actingAs(r, p), role); err != nil {
		h.refused(w, r, p, "creating a role", err, func(status int, v view) { h.showAdmin(w, r, p, status, v) })
		return
	}
	done(w, r, Path+"admin", "role-created")
}

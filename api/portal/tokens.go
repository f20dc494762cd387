package portal

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"platformapi/resources"
)

// listLimit is how many rows a portal list shows (the API pages further).
const listLimit = 100

// tokensPage is the API tokens page: the person's tokens, the service
// accounts' for token administrators, and the form to mint one.
type tokensPage struct {
	Mine          []tokenLine
	Accounts      []resources.ServiceAccount // token administrators only
	AccountTokens []tokenLine                // token administrators only
	Scopes        []string                   // keys the person may put on a token
	CanAdmin      bool                       // holds api-tokens-admin-global
	Form          tokenForm                  // the refused form, refilled
	Account       url.Values                 // the refused new service account, refilled
	Refused       tokenRefusal               // the refused Revoke or Extend, named; its days refilled
	FormID        string                     // the create form's single-use id (mintonce.go)
	DefaultDays   int
	MaxDays       int
}

// tokenLine is a token as a row of the page (never its value).
type tokenLine struct {
	resources.APIToken
	Status string
}

// tokenRefusal is a refused action on one token: what was being done
// ("Revoking", "Extending"), the token's id and, for an Extend, the days
// sent.
type tokenRefusal struct {
	Doing string
	ID    int64
	Days  string
}

// tokenRows is a table of tokens with what its action forms need.
type tokenRows struct {
	Lines                []tokenLine
	CanAdmin             bool
	DefaultDays, MaxDays int
	Refused              tokenRefusal
}

// newTokenRows is the table of lines on pg (a template function).
func newTokenRows(lines []tokenLine, pg tokensPage) tokenRows {
	return tokenRows{Lines: lines, CanAdmin: pg.CanAdmin, DefaultDays: pg.DefaultDays,
		MaxDays: pg.MaxDays, Refused: pg.Refused}
}

// aboutToken names, in problem, the token a refused action was about, when
// the page lists it.
func (pg tokensPage) aboutToken(problem string) string {
	for _, l := range slices.Concat(pg.Mine, pg.AccountTokens) {
		if pg.Refused.ID != 0 && l.ID == pg.Refused.ID {
			return pg.Refused.Doing + " the token " + l.Name + ": " + problem
		}
	}
	return problem
}

// mintedPage is the answer to a mint: the value, shown this once, and the
// API's whoami address for the example that uses it.
type mintedPage struct {
	resources.MintedToken
	WhoAmI string
}

// tokenForm is the mint form as posted.
type tokenForm struct {
	Name, AllowedIPs, ServiceAccount string
	Scopes                           []string
	Days                             int
	AllowDestroy                     bool
}

// routeTokens registers the API tokens page and its actions.
func (h *Handler) routeTokens(mux *http.ServeMux) {
	h.handle(mux, "GET /portal/tokens", h.signedIn("portal-tokens", h.tokens),
		"**API tokens**: your tokens (status, scopes, expiry, last use, "+
			"networks); for holders of `api-tokens-admin-global` the Create token "+
			"form (name, scopes from your keys, days, Allow destroy, allowed "+
			"networks, owner), the service accounts and their tokens")
	h.handle(mux, "POST /portal/tokens", h.signedIn("portal-token-create", h.createToken),
		"mints a token (`api-tokens-admin-global`); the answer shows its value "+
			"**once**, with a copy button")
	h.handle(mux, "POST /portal/tokens/{id}/revoke", h.signedIn("portal-token-revoke", h.revokeToken),
		"revokes a token at once (your own; another's with "+
			"`api-tokens-admin-global`)")
	h.handle(mux, "POST /portal/tokens/{id}/extend", h.signedIn("portal-token-extend", h.extendToken),
		"sets a token's expiry to `days` from now (`api-tokens-admin-global`)")
	h.handle(mux, "POST /portal/service-accounts", h.signedIn("portal-service-account-create",
		h.createServiceAccount), "creates a service account with keys you hold (`api-tokens-admin-global`)")
}

// tokens shows the page with the notice of the last action.
func (h *Handler) tokens(w http.ResponseWriter, r *http.Request, p resources.Session) {
	form := tokenForm{Days: resources.TokenDefaultDays}
	h.showTokens(w, r, p, http.StatusOK, view{Notice: notice(r)}, form)
}

// showTokens renders the tokens page with v's notice or problem.
func (h *Handler) showTokens(w http.ResponseWriter, r *http.Request, p resources.Session, status int, v view,
	form tokenForm) {
	h.showTokensPage(w, r, p, status, v, form, nil)
}

// showTokensPage renders the tokens page with the mint form filled from
// form; refill, when set, fills in another refused form.
func (h *Handler) showTokensPage(w http.ResponseWriter, r *http.Request, p resources.Session,
	status int, v view, form tokenForm, refill func(*tokensPage)) {
	pg := tokensPage{CanAdmin: slices.Contains(p.Permissions, resources.PermAPITokensAdmin), Form: form,
		DefaultDays: resources.TokenDefaultDays, MaxDays: resources.TokenMaxDays, FormID: h.formID(r)}
	if refill != nil {
		refill(&pg)
	}
	for _, k := range p.Permissions {
		if resources.TokenAllowed(k) {
			pg.Scopes = append(pg.Scopes, k)
		}
	}
	var err error
	if pg.Mine, err = h.tokenLines(r, resources.TokenFilter{UserID: p.UserID}); err == nil && pg.CanAdmin {
		err = h.accountTokens(r, &pg)
	}
	if err != nil {
		h.fault(w, r, "listing tokens", err)
		return
	}
	v.Title, v.Person, v.Page, v.Problem = "API tokens", &p, pg, pg.aboutToken(v.Problem)
	h.render(w, r, status, tokensTemplate, v)
}

// tokenLines lists the newest tokens matching f with their status now.
func (h *Handler) tokenLines(r *http.Request, f resources.TokenFilter) ([]tokenLine, error) {
	page, err := h.cfg.Store.ListTokens(r.Context(), f, resources.PageQuery{Limit: listLimit})
	if err != nil {
		return nil, err
	}
	out := make([]tokenLine, len(page.Items))
	for i, t := range page.Items {
		out[i] = tokenLine{APIToken: t, Status: t.Status(h.cfg.Now())}
	}
	return out, nil
}

// accountTokens fills in the service accounts and the newest of their
// tokens (one query each).
func (h *Handler) accountTokens(r *http.Request, pg *tokensPage) error {
	accts, err := h.cfg.Store.ListServiceAccounts(r.Context(), resources.PageQuery{Limit: listLimit})
	if err != nil {
		return err
	}
	pg.Accounts = accts.Items
	pg.AccountTokens, err = h.tokenLines(r, resources.TokenFilter{Kind: resources.TokenKindServiceAccount})
	return err
}

// createToken mints a token and shows its value this once; a form that
// already minted one mints nothing and says so.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, p resources.Session) {
	form, t, err := parseTokenForm(r)
	if err == nil && slices.Contains(p.Permissions, resources.PermAPITokensAdmin) {
		t.FormID, err = h.formNonce(r) // without the key the store refuses (403): no form was shown
	}
	if err == nil {
		var minted resources.MintedToken
		if minted, err = h.cfg.Actions.CreateToken(r.Context(), actingAs(r, p), t); err == nil {
			pg := mintedPage{MintedToken: minted, WhoAmI: baseURL(&h.cfg, r) + "/api/v1/whoami"}
			v := view{Title: "Your new token", Person: &p, Page: pg}
			h.render(w, r, http.StatusOK, mintedTemplate, v)
			return
		}
	}
	if errors.Is(err, resources.ErrTokenFormUsed) {
		h.mintedAlready(w, r, p)
		return
	}
	h.refused(w, r, p, "minting a token", err, func(status int, v view) { h.showTokens(w, r, p, status, v, form) })
}

// parseTokenForm reads the mint form into what the portal action takes.
func parseTokenForm(r *http.Request) (tokenForm, resources.NewToken, error) {
	if err := r.ParseForm(); err != nil {
		return tokenForm{}, resources.NewToken{}, resources.Invalid("form", resources.CodeValidationFailed,
			"the form could not be read")
	}
	f := tokenForm{Name: strings.TrimSpace(r.PostForm.Get("name")), Scopes: r.PostForm["scopes"],
		AllowedIPs: r.PostForm.Get("allowed_ips"), ServiceAccount: r.PostForm.Get("service_account"),
		AllowDestroy: r.PostForm.Get("allow_destroy") == "on"}
	days, err := formDays(r.PostForm.Get("days"))
	f.Days = days
	t := resources.NewToken{Name: f.Name, Scopes: f.Scopes, Days: days, AllowDestroy: f.AllowDestroy,
		ServiceAccount: f.ServiceAccount}
	if err != nil {
		return f, t, err
	}
	for _, s := range strings.FieldsFunc(f.AllowedIPs, func(c rune) bool {
		return c == ',' || c == ' ' ||
			c == '\n' || c == '\r' || c == '\t'
	}) {
		pfx, err := resources.ParseAllowedNetwork(s)
		if err != nil {
			return f, t, err
		}
		t.AllowedIPs = append(t.AllowedIPs, pfx)
	}
	return f, t, nil
}

// formDays reads a lifetime in days from a form field.
func formDays(s string) (int, error) {
	days, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, resources.Invalid("days", resources.CodeValidationFailed, "the lifetime must be a number of days")
	}
	return days, resources.ValidateTokenDays(days)
}

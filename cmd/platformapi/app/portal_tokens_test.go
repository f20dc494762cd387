package app

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// enableAPI turns the API on as a fresh administrator.
func (w *portalWorld) enableAPI() {
	w.t.Helper()
	w.personWith("root@example.test", "Root", resources.PermAdmin)
	if _, err := w.m.Portal().SetAPIEnabled(w.t.Context(), resources.Actor{Label: "root@example.test"},
		true); err != nil {
		w.t.Fatal(err)
	}
}

// TestPortalTokens_Mint_ValueShownOnceWorksOnTheAPIAndIsAudited mints a
// token on the page: the value appears once (never again on the list),
// opens /api/v1/whoami as its owner, and the audit row names the person,
// auth kind session, the request id and the address, without the value;
// the server's log (debug and up) has the request, never the value.
func TestPortalTokens_Mint_ValueShownOnceWorksOnTheAPIAndIsAudited(t *testing.T) {
	w := startPortal(t, false, false)
	w.enableAPI()
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.signedInAs("ada@example.test")
	page := w.get("/portal/tokens")
	for _, want := range []string{`id="create-token"`, `value="tenancy-read-global"`, "None yet."} {
		if !strings.Contains(page, want) {
			t.Fatalf("tokens page lacks %q:\n%s", want, page)
		}
	}
	res, body := w.post("/portal/tokens", w.mintForm(url.Values{"name": {"laptop"},
		"scopes": {resources.PermTenancyRead}, "days": {"30"}, "allowed_ips": {"127.0.0.0/8"}}), "req-mint-1")
	value := mintedValue(body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(value, "svc_pat_") {
		t.Fatalf("mint: %d, value %q\n%s", res.StatusCode, value, body)
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the page with the value may be cached: %q", res.Header.Get("Cache-Control"))
	}
	status, who := w.api(http.MethodGet, "/whoami", value)
	if status != http.StatusOK || !strings.Contains(who, "ada@example.test") {
		t.Fatalf("whoami with the minted token: %d %s", status, who)
	}
	if list := w.get("/portal/tokens"); strings.Contains(list, value) || !strings.Contains(list, "laptop") {
		t.Fatalf("the list shows the value again, or not the token:\n%s", list)
	}
	var got struct{ Actor, AuthKind, RequestID, SourceIP, After string }
	if err := w.m.db.NewRaw(`SELECT actor, auth_kind, request_id, source_ip, after_state::text FROM audit_events
		WHERE action = 'api_token.create'`).Scan(t.Context(), &got.Actor, &got.AuthKind, &got.RequestID,
		&got.SourceIP, &got.After); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.After, value) || strings.Contains(got.After, value[8:]) {
		t.Fatalf("the audit row holds the token value: %s", got.After)
	}
	if logs := w.logs.String(); !strings.Contains(logs, "portal-token-create") || strings.Contains(logs, value[8:]) {
		t.Fatalf("the mint is not in the log, or its value is:\n%s", logs)
	}
	got.After = ""
	want := struct{ Actor, AuthKind, RequestID, SourceIP, After string }{"ada@example.test", "session",
		"req-mint-1", "127.0.0.1", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("audit row (-want +got)\n%s", diff)
	}
}

// TestPortalTokens_MintRefused_PageSaysWhyNothingCreated: each broken rule
// answers the page with the rule's words and the form refilled, and no
// token exists.
func TestPortalTokens_MintRefused_PageSaysWhyNothingCreated(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.personWith("bob@example.test", "Bob", resources.PermTenancyRead)
	cases := []struct {
		name, as string
		form     url.Values
		status   int
		says     string
	}{
		{"days out of range", "ada@example.test", url.Values{"name": {"ci-days"},
			"scopes": {resources.PermTenancyRead}, "days": {"400"}}, 422, "token lifetime must be 1 to 365 days"},
		{"scope not held", "ada@example.test", url.Values{"name": {"ci-scope"}, "scopes": {resources.PermAuditRead},
			"days": {"30"}}, 422, "is not held by the minting person"},
		{"scope never on a token", "ada@example.test", url.Values{"name": {"ci-admin"},
			"scopes": {resources.PermAdmin}, "days": {"30"}}, 422, "can never be put on a token"},
		{"bad network", "ada@example.test", url.Values{"name": {"ci-net"}, "scopes": {resources.PermTenancyRead},
			"days": {"30"}, "allowed_ips": {"10.0.0.0/8, nonsense"}}, 422, "is not an address or a network in CIDR form"},
		{"minter lacks api-tokens-admin-global", "bob@example.test", url.Values{"name": {"ci-bob"},
			"scopes": {resources.PermTenancyRead}, "days": {"30"}}, 403, "minting a token needs api-tokens-admin-global"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w.signedInAs(c.as)
			form := c.form
			if c.as == "ada@example.test" { // the page hands its form out to token administrators
				form = w.mintForm(c.form)
			}
			res, body := w.post("/portal/tokens", form, "req-"+c.form.Get("name"))
			if res.StatusCode != c.status || !strings.Contains(body, c.says) {
				t.Fatalf("want %d saying %q, got %d:\n%s", c.status, c.says, res.StatusCode, body)
			}
			if c.status == 422 && !strings.Contains(body, `value="`+c.form.Get("name")+`"`) {
				t.Fatalf("the form is not refilled:\n%s", body)
			}
		})
	}
	if n := w.count("SELECT count(*) FROM api_tokens"); n != 0 {
		t.Fatalf("refused mints left %d tokens", n)
	}
}

// TestPortalTokens_RevokeAndExtend: a person revokes their own token (it
// stops at once); extending needs api-tokens-admin-global; another's token
// is, to a person without an api-tokens key, an unknown id (404).
func TestPortalTokens_RevokeAndExtend(t *testing.T) {
	w := startPortal(t, false, false)
	w.enableAPI()
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.personWith("bob@example.test", "Bob", resources.PermTenancyRead)
	mint := func(as, owner string) (int64, string) {
		t.Helper()
		m, err := w.m.Portal().CreateToken(t.Context(), resources.Actor{Label: as},
			resources.NewToken{Name: "t-" + owner, Scopes: []string{resources.PermTenancyRead}, Days: 10})
		if err != nil {
			t.Fatal(err)
		}
		return m.Token.ID, m.Value
	}
	adaID, adaValue := mint("ada@example.test", "ada")
	w.signedInAs("bob@example.test")
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	if res, body := w.post("/portal/tokens/"+id(adaID)+"/revoke", nil, "req-r1"); res.StatusCode != 404 ||
		!strings.Contains(body, "no API token "+id(adaID)) ||
		strings.Contains(body, "Revoking the token") { // Bob's page does not list Ada's token
		t.Fatalf("Bob revoking Ada's token: %d\n%s", res.StatusCode, body)
	}
	res, _ := w.post("/portal/tokens/"+id(adaID)+"/extend", url.Values{"days": {"200"}}, "r2")
	if res.StatusCode != 404 {
		t.Fatalf("Bob extending: %d", res.StatusCode)
	}
	w.signedInAs("ada@example.test")
	res, _ = w.post("/portal/tokens/"+id(adaID)+"/extend", url.Values{"days": {"200"}}, "req-extend")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/tokens?done=token-extended" {
		t.Fatalf("extend: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if !strings.Contains(w.get("/portal/tokens?done=token-extended"), "The token&#39;s expiry is extended.") {
		t.Fatal("no notice after the extension")
	}
	res, _ = w.post("/portal/tokens/"+id(adaID)+"/revoke", nil, "req-revoke")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke own token: %d", res.StatusCode)
	}
	if status, _ := w.api(http.MethodGet, "/whoami", adaValue); status != http.StatusUnauthorized {
		t.Fatalf("whoami with the revoked token: %d", status)
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE action IN ('api_token.extend', 'api_token.revoke')
		AND auth_kind = 'session' AND request_id IN ('req-extend', 'req-revoke')`); n != 2 {
		t.Fatalf("audit rows of the two actions with their request ids: %d", n)
	}
	if res, _ := w.post("/portal/tokens/abc/revoke", nil, "r3"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("revoke of a malformed id: %d", res.StatusCode)
	}
}

// TestPortalPages_SignedOut_NothingDone: a page without a session sends the
// browser to sign in; an action without one is refused and changes nothing.
func TestPortalPages_SignedOut_NothingDone(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	for _, p := range []string{"/portal/tokens", "/portal/approvals", "/portal/admin"} {
		if res, _ := w.do(http.MethodGet, w.url+p, nil); res.StatusCode != http.StatusSeeOther ||
			res.Header.Get("Location") != "/portal/?done=sign-in-first" {
			t.Fatalf("GET %s signed out: %d %s", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res, _ := w.post("/portal/tokens", url.Values{"name": {"x"}, "scopes": {resources.PermTenancyRead},
		"days": {"30"}}, "r")
	if res.StatusCode != http.StatusForbidden || w.count("SELECT count(*) FROM api_tokens") != 0 {
		t.Fatalf("mint signed out: %d", res.StatusCode)
	}
}

// TestPortalTokens_ServiceAccountsShownToTokenAdministratorsOnly: a holder
// of api-tokens-admin-global sees the service accounts and their tokens
// (not people's tokens of others); anyone else sees only their own.
func TestPortalTokens_ServiceAccountsShownToTokenAdministratorsOnly(t *testing.T) {
	w := startPortal(t, false, false)
	ada := resources.Actor{Label: "ada@example.test"}
	w.personWith(ada.Label, "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.personWith("bob@example.test", "Bob", resources.PermTenancyRead)
	if _, err := w.m.Portal().CreateServiceAccount(t.Context(), ada, resources.NewServiceAccount{Name: "siem",
		Permissions: []string{resources.PermTenancyRead}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []resources.NewToken{{Name: "siem export", ServiceAccount: "siem"}, {Name: "ada laptop"}} {
		n.Scopes, n.Days = []string{resources.PermTenancyRead}, 10
		if _, err := w.m.Portal().CreateToken(t.Context(), ada, n); err != nil {
			t.Fatal(err)
		}
	}
	w.signedInAs(ada.Label)
	page := w.get("/portal/tokens")
	for _, want := range []string{"<td>siem</td>", "siem export", "ada laptop", `id="create-service-account"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("Ada's tokens page lacks %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, "<td>ada laptop <"); n != 1 { // the row, not its buttons' names
		t.Fatalf("Ada's own token is listed %d times (once: under hers, not the accounts')", n)
	}
	w.signedInAs("bob@example.test")
	page = w.get("/portal/tokens")
	for _, not := range []string{"siem", "ada laptop", `id="create-token"`} {
		if strings.Contains(page, not) {
			t.Fatalf("Bob's tokens page shows %q:\n%s", not, page)
		}
	}
}

// TestPortalRefusal_DetailAndRemedyReadAsTwoSentences: a refused action's
// words are the rule's detail and remedy as two sentences, not run
// together ("…of ada@example.test Ask an administrator…").
func TestPortalRefusal_DetailAndRemedyReadAsTwoSentences(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada")
	w.signedInAs("ada@example.test")
	res, body := w.post("/portal/service-accounts", url.Values{"name": {"sa"}}, "req-sa")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "ada@example.test. Ask an") {
		t.Fatalf("refused service account: %d\n%s", res.StatusCode, body)
	}
}

// TestPortalTokens_ExtendRefused_NamesTheTokenAndKeepsItsDays: a refused
// Extend (a lifetime past the maximum, sent by hand: the browser's min and
// max stop the form) says which token it was about, and that row's days
// field keeps what was sent, marked invalid; the other rows keep the
// default. Nothing changes.
func TestPortalTokens_ExtendRefused_NamesTheTokenAndKeepsItsDays(t *testing.T) {
	w := startPortal(t, false, false)
	w.enableAPI()
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	var ids []int64
	for _, name := range []string{"laptop", "ci-runner"} {
		m, err := w.m.Portal().CreateToken(t.Context(), resources.Actor{Label: "ada@example.test"},
			resources.NewToken{Name: name, Scopes: []string{resources.PermTenancyRead}, Days: 10})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Token.ID)
	}
	w.signedInAs("ada@example.test")
	tooLong := strconv.Itoa(resources.TokenMaxDays + 1)
	res, body := w.post("/portal/tokens/"+strconv.FormatInt(ids[1], 10)+"/extend",
		url.Values{"days": {tooLong}}, "req-extend-refused")
	if res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `<p class="problem" role="alert">Extending the token ci-runner: `) {
		t.Fatalf("refused extend: %d, the problem should name ci-runner:\n%s", res.StatusCode, body)
	}
	refused := `value="` + tooLong + `" aria-invalid="true"`
	if strings.Count(body, refused) != 1 || !strings.Contains(body,
		`value="`+strconv.Itoa(resources.TokenDefaultDays)+
			`" aria-label="Days from now until laptop expires"`) {
		t.Fatalf("the refused row should keep %s days (marked invalid), the other the default:\n%s",
			tooLong, body)
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE action = 'api_token.extend'`); n != 0 {
		t.Fatalf("a refused extend wrote %d audit rows", n)
	}
}

// TestPortalTokens_MintSameNameTwice_PageNamesTheOtherByID: a second live
// token of one name is minted (a rotation), and the page tells the two
// apart: the answer with the new value names the other live one by its
// id, and the list shows each token's id beside its name.
func TestPortalTokens_MintSameNameTwice_PageNamesTheOtherByID(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.signedInAs("ada@example.test")
	form := url.Values{"name": {"laptop"}, "scopes": {resources.PermTenancyRead}, "days": {"30"}}
	_, first := w.post("/portal/tokens", w.mintForm(form), "req-mint-1")
	res, second := w.post("/portal/tokens", w.mintForm(form), "req-mint-2") // a new form, not a resubmission
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(mintedValue(second), "svc_pat_") {
		t.Fatalf("second mint of one name: %d\n%s", res.StatusCode, second)
	}
	if strings.Contains(first, "also hold") {
		t.Errorf("the first mint names another live token:\n%s", first)
	}
	if !strings.Contains(second, "also hold") || !strings.Contains(second, "#1") {
		t.Errorf("the second mint does not name the live token #1 of that name:\n%s", second)
	}
	list := w.get("/portal/tokens")
	for _, want := range []string{`laptop <span class="muted">#1</span>`, `laptop <span class="muted">#2</span>`} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
}

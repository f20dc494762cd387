package app

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// formIDField finds the create form's single-use id on the tokens page.
var formIDField = regexp.MustCompile(`name="form_id" value="([^"]+)"`)

// mintForm is the create-token form as the tokens page hands it out now:
// values plus the page's single-use form id.
func (w *portalWorld) mintForm(values url.Values) url.Values {
	w.t.Helper()
	m := formIDField.FindStringSubmatch(w.get("/portal/tokens"))
	if m == nil {
		w.t.Fatal("the tokens page has no form id")
	}
	form := url.Values{"form_id": {m[1]}}
	for k, v := range values {
		form[k] = v
	}
	return form
}

// TestPortalTokens_CreateFormResubmitted_NoSecondToken: the answer to the
// create form shows the value once; submitting that form again (a reload
// of "Your new token", or two quick clicks at once) mints nothing and
// answers 409 saying the token was already created and its value shown
// once, never the value; a form id that is missing, forged or of another
// session is refused with the form refilled.
func TestPortalTokens_CreateFormResubmitted_NoSecondToken(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.personWith("eve@example.test", "Eve", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	fields := url.Values{"name": {"laptop"}, "scopes": {resources.PermTenancyRead}, "days": {"30"}}
	w.signedInAs("eve@example.test")
	eves := w.mintForm(fields)
	w.signedInAs("ada@example.test")
	form := w.mintForm(fields)
	res, first := w.post("/portal/tokens", form, "req-mint")
	value := mintedValue(first)
	if res.StatusCode != http.StatusOK || value == "" {
		t.Fatalf("first submission: %d\n%s", res.StatusCode, first)
	}
	res, again := w.post("/portal/tokens", form, "req-reload")
	if res.StatusCode != http.StatusConflict || !strings.Contains(again, "already created") ||
		!strings.Contains(again, "shown once") || strings.Contains(again, value) || mintedValue(again) != "" {
		t.Fatalf("resubmission: %d\n%s", res.StatusCode, again)
	}
	twice := w.mintForm(url.Values{"name": {"twice"}, "scopes": {resources.PermTenancyRead}, "days": {"30"}})
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Go(func() { r, _ := w.post("/portal/tokens", twice, "req-click"); statuses[i] = r.StatusCode })
	}
	wg.Wait()
	if statuses[0]+statuses[1] != http.StatusOK+http.StatusConflict {
		t.Fatalf("two clicks at once: %v, want one 200 and one 409", statuses)
	}
	for name, f := range map[string]url.Values{"no form id": fields,
		"forged form id":         merge(fields, url.Values{"form_id": {"AAAA.BBBB"}}),
		"another session's form": eves} {
		t.Run(name, func(t *testing.T) {
			res, body := w.post("/portal/tokens", f, "req-refused")
			if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `value="laptop"`) {
				t.Fatalf("%d, want 422 with the form refilled\n%s", res.StatusCode, body)
			}
		})
	}
	got := []int{w.count("SELECT count(*) FROM api_tokens WHERE name = 'laptop'"),
		w.count("SELECT count(*) FROM api_tokens WHERE name = 'twice'"),
		w.count("SELECT count(*) FROM audit_events WHERE action = 'api_token.create'")}
	if diff := cmp.Diff([]int{1, 1, 2}, got); diff != "" {
		t.Fatalf("tokens laptop, twice, create audit rows (-want +got)\n%s", diff)
	}
}

// merge is a copy of a with b's values added.
func merge(a, b url.Values) url.Values {
	out := url.Values{}
	for _, v := range []url.Values{a, b} {
		for k, vs := range v {
			out[k] = append(out[k], vs...)
		}
	}
	return out
}

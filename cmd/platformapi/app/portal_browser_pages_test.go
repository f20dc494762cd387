package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// valueOf is the value of the first input of the CSS selector.
func valueOf(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("browser, the value of %s: %v", selector, err)
	}
	return v
}

// onAPhone shows the page at a phone's width (390 CSS pixels), requires
// that it fits (tables scroll inside it), keeps a screenshot, and goes
// back to the laptop's width.
func onAPhone(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	browse(t, ctx, "a phone's viewport", chromedp.EmulateViewport(390, 844))
	defer browse(t, ctx, "a laptop's viewport", chromedp.EmulateViewport(1280, 900))
	rctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	width, err := chromedp.Run(rctx, chromedp.Evaluate[int]("document.documentElement.scrollWidth"))
	if err != nil || width > 390 {
		t.Fatalf("the page is %d pixels wide on a 390-pixel phone (%v)", width, err)
	}
	screenshot(t, ctx, name)
}

// TestPortalBrowser_MintToken_ValueOpensTheAPI: in the browser the demo
// operator mints a token on the API tokens page (a scope ticked, 7 days),
// sees its value once beside a copy button, and that value opens
// /api/v1/whoami; the list then shows the token without its value.
func TestPortalBrowser_MintToken_ValueOpensTheAPI(t *testing.T) {
	w, ctx := startBrowsingPortal(t, portalSetup{demo: true, demoWorld: true})
	signInAsDemo(t, ctx, w.url, demoMara)
	if status := click(t, ctx, `nav a[href="/portal/tokens"]`); status != http.StatusOK {
		t.Fatalf("the API tokens page: %d", status)
	}
	screenshot(t, ctx, "api-tokens")
	onAPhone(t, ctx, "api-tokens-phone")
	browse(t, ctx, "tick a scope", chromedp.Click(chromedp.CSS(
		`#create-token input[name="scopes"][value="`+resources.PermTenancyRead+`"]`)))
	status := submitForm(t, ctx, "#create-token", map[string]string{"name": "browser laptop", "days": "7"})
	if status != http.StatusOK {
		t.Fatalf("minting: %d %s", status, textOf(t, ctx, "main"))
	}
	value := valueOf(t, ctx, "#token-value")
	if !strings.HasPrefix(value, "svc_pat_") {
		t.Fatalf("the minted page shows no token value: %q", value)
	}
	screenshot(t, ctx, "token-minted")
	code, who := w.api(http.MethodGet, "/whoami", value)
	if code != http.StatusOK || !strings.Contains(who, demoMara) {
		t.Fatalf("whoami with the value shown: %d %s", code, who)
	}
	visit(t, ctx, w.url+"/portal/tokens")
	if list := textOf(t, ctx, "main"); !strings.Contains(list, "browser laptop") || strings.Contains(list, value) {
		t.Fatalf("the list after minting:\n%s", list)
	}
}

// TestPortalBrowser_ApproveThenReject: the administrator approves the demo
// world's waiting prod promotion in the browser and its operation
// succeeds; a second promotion, requested through the API, is rejected
// with a reason and its operation fails with it; the Administration page
// shows the API on.
func TestPortalBrowser_ApproveThenReject(t *testing.T) {
	w, ctx := startBrowsingPortal(t, portalSetup{demo: true, demoWorld: true})
	op := w.waitingPromotion()
	signInAsDemo(t, ctx, w.url, demoAdmin)
	if status := click(t, ctx, `nav a[href="/portal/approvals"]`); status != http.StatusOK {
		t.Fatalf("the approvals page: %d", status)
	}
	screenshot(t, ctx, "approvals")
	form := "#approval-" + strconv.FormatInt(op.ID, 10) + ` form[action$="/approve"]`
	if status := submitForm(t, ctx, form, map[string]string{"note": "checked in uat"}); status != http.StatusOK {
		t.Fatalf("approving: %d", status)
	}
	if got := textOf(t, ctx, ".notice"); !strings.Contains(got, "approved") {
		t.Fatalf("the notice after approving: %q", got)
	}
	screenshot(t, ctx, "approved")
	testkit.Eventually(t, 20*time.Second, "the approved promotion succeeds", func() bool {
		return w.releaseStatus(op.ID) == resources.OpSucceeded
	})
	second := w.requestProdPromotion(op)
	visit(t, ctx, w.url+"/portal/approvals")
	form = "#approval-" + strconv.FormatInt(second, 10) + ` form[action$="/reject"]`
	if status := submitForm(t, ctx, form, map[string]string{"reason": "not during the sale"}); status != 200 {
		t.Fatalf("rejecting: %d", status)
	}
	screenshot(t, ctx, "rejected")
	if got := w.releaseStatus(second); got != resources.OpFailed {
		t.Fatalf("the rejected promotion is %s", got)
	}
	if status := click(t, ctx, `nav a[href="/portal/admin"]`); status != http.StatusOK {
		t.Fatalf("the administration page: %d", status)
	}
	if got := textOf(t, ctx, "#api-state"); !strings.Contains(got, "on") {
		t.Fatalf("the API switch on the administration page: %q", got)
	}
	screenshot(t, ctx, "administration")
}

// requestProdPromotion has the demo administrator request another prod
// promotion of op's project and component through the API; it answers
// the new release operation's id (awaiting approval).
func (w *portalWorld) requestProdPromotion(op resources.ReleaseOperation) int64 {
	w.t.Helper()
	m, err := w.m.Portal().CreateToken(w.t.Context(), resources.Actor{Label: demoAdmin}, resources.NewToken{
		Name: "promoter", Days: 1, Scopes: []string{resources.PermReleasesWrite, resources.PermReleasesRead,
			resources.PermProjectsRead}})
	if err != nil {
		w.t.Fatal(err)
	}
	body := `{"component":"` + *op.Component + `","target_env":"prod"}`
	req, err := http.NewRequestWithContext(w.t.Context(), http.MethodPost, w.url+"/api/v1/projects/"+
		strconv.FormatInt(op.ProjectID, 10)+"/release-promotions", strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+m.Value)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "browser-second-promotion")
	res, err := w.client.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || got["status"] != resources.OpAwaitingApproval {
		w.t.Fatalf("requesting a prod promotion: %d %v %v", res.StatusCode, got, err)
	}
	id, err := strconv.ParseInt(targetOrRelease(got), 10, 64)
	if err != nil {
		w.t.Fatalf("the promotion's release id: %v", got)
	}
	return id
}

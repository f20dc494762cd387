package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser kit: a real headless chromium (Debian's `chromium`) driven
// through the DevTools protocol by chromedp, one browser per test. Each step
// is bounded by browserStepTimeout; every page can be kept as a full-page
// PNG (screenshot) under $PORTAL_SCREENSHOTS_DIR (CI keeps them).

// browserStepTimeout bounds one step in the browser (a navigation with its
// redirects, a read of the page, a screenshot); browserStartTimeout bounds
// the browser's start.
const (
	browserStepTimeout  = 20 * time.Second
	browserStartTimeout = 30 * time.Second
)

// chromiumPath finds the browser. Without one the test is skipped, except
// under CI=true, where it fails: CI must run the browser tests.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no chromium on PATH: the browser tests need it (apt-get install chromium)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI=true, so this is a failure, not a skip")
	}
	t.Skip(msg + "; skipped")
	return ""
}

// newBrowser starts a headless chromium with a fresh profile for this test
// and returns its tab's context (use it with the helpers below); the
// browser is stopped when the test ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromiumPath(t)), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900)}
	actx, stopAlloc := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, stop := chromedp.NewContext(actx)
	t.Cleanup(func() { stop(); stopAlloc() }) // before the profile directory is removed
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }() // the first run starts the browser, bound to ctx
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("starting chromium: %v", err)
		}
	case <-time.After(browserStartTimeout):
		stop()
		t.Fatalf("chromium did not start within %s", browserStartTimeout)
	}
	return ctx
}

// browse runs steps in the browser within browserStepTimeout.
func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser, %s: %v", what, err)
	}
}

// navigating runs steps that lead the browser to another page (a link or
// button clicked, a URL opened), waits until that page has loaded, redirects
// followed, and returns its HTTP status.
func navigating(t *testing.T, ctx context.Context, what string,
	steps ...chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		t.Fatalf("browser, %s: %v", what, err)
	}
	return res.Status
}

// visit opens target and returns the page's HTTP status.
func visit(t *testing.T, ctx context.Context, target string) int64 {
	t.Helper()
	return navigating(t, ctx, "open "+target, chromedp.Navigate(target))
}

// click clicks the element of the CSS selector, which leads to another
// page (a link, a form's button), and returns that page's HTTP status.
func click(t *testing.T, ctx context.Context, selector string) int64 {
	t.Helper()
	return navigating(t, ctx, "click "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// submitForm fills the form of the CSS selector (fields by name: text,
// hidden, number or select values; click checkboxes yourself) and clicks
// its submit button; it returns the status of the page the form leads to.
func submitForm(t *testing.T, ctx context.Context, form string, fields map[string]string) int64 {
	t.Helper()
	var steps []chromedp.Action[chromedp.Void]
	for name, value := range fields {
		steps = append(steps, chromedp.SetValue(chromedp.CSS(fmt.Sprintf("%s [name=%q]", form, name)), value))
	}
	browse(t, ctx, "fill "+form, steps...)
	return click(t, ctx, form+` [type="submit"]`)
}

// textOf is the visible text of the first element of the CSS selector,
// waiting (within browserStepTimeout) for it to be shown.
func textOf(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("browser, the text of %s: %v", selector, err)
	}
	return text
}

// location is the URL the browser shows.
func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatalf("browser, its location: %v", err)
	}
	return loc
}

// screenshotDir is $PORTAL_SCREENSHOTS_DIR (CI: .ci/out/screenshots),
// else a directory removed with the test.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PORTAL_SCREENSHOTS_DIR")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot keeps the whole page the browser shows as a PNG named after
// the test and name (<Test>--<name>.png) and returns its path.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("browser, a screenshot: %v", err)
	}
	file := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "--" + name + ".png"
	path := filepath.Join(screenshotDir(t), file)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// signInAsDemo signs the browser in as the demo person with email through
// the demo sign-in of the portal at baseURL (a server in demo mode) and
// checks the front page then says so.
func signInAsDemo(t *testing.T, ctx context.Context, baseURL, email string) {
	t.Helper()
	if status := visit(t, ctx, baseURL+"/portal/demo-login"); status != 200 {
		t.Fatalf("the demo sign-in page: %d", status)
	}
	form := fmt.Sprintf(`form:has(input[name="email"][value=%q])`, email)
	if status := click(t, ctx, form+` button[type="submit"]`); status != 200 {
		t.Fatalf("demo sign-in as %s: %d, %s", email, status, textOf(t, ctx, "body"))
	}
	if got := textOf(t, ctx, "body"); !strings.Contains(got, "Signed in as") || !strings.Contains(got, email) {
		t.Fatalf("after the demo sign-in as %s the portal shows:\n%s", email, got)
	}
}

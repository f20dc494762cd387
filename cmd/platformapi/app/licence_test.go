package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/licencetest"
)

func TestPortalLicence_ShowPrintsInstallationIDWithoutLicence(t *testing.T) {
	c := newBareCLI(t)
	m := c.ok("portal", "licence", "show")
	id, _ := m["installation_id"].(string)
	if len(id) != 36 || m["state"] != "missing" || m["serial"] != nil || m["remedy"] == nil {
		t.Fatalf("show: %v", m)
	}
	if again := c.installationID(); again != id {
		t.Fatalf("the installation id changed: %s, then %s", id, again)
	}
}

func TestPortalLicence_InstallVerifiesAuditsAsSessionAndNeedsLicenceAdmin(t *testing.T) {
	c := newBareCLI(t)
	p := licencetest.Payload(c.installationID(), time.Now())
	m := c.installLicence(p)
	got := map[string]any{"state": m["state"], "serial": m["serial"], "edition": m["edition"]}
	if diff := cmp.Diff(map[string]any{"state": "valid", "serial": licencetest.Serial, "edition": "test"}, got); diff != "" {
		t.Fatalf("install (-want +got):\n%s", diff)
	}
	n := c.count("SELECT count(*) FROM audit_events WHERE action = 'licence.install' " +
		"AND auth_kind = 'session' AND actor = 'root@example.test' " +
		"AND entity_id = '" + licencetest.Serial + "'")
	if n != 1 {
		t.Fatalf("install events: %d", n)
	}
	other := p
	other.InstallationID = "someone-else"
	e := c.refused(resources.CodeLicenceBundleInvalid, "portal", "licence", "install", "--as", "root@example.test",
		"--bundle", c.bundleFile(other))
	if e.Field != "bundle" || !strings.HasPrefix(e.Detail, "installation_id:") {
		t.Fatalf("a bundle of another installation: %v", e)
	}
	missing := filepath.Join(t.TempDir(), "missing.bundle") // a refusal like any other: JSON naming it
	e = c.refused(resources.CodeLicenceBundleInvalid, "portal", "licence", "install", "--as", "root@example.test",
		"--bundle", missing)
	if e.Field != "bundle" || !strings.Contains(e.Detail, missing) {
		t.Fatalf("a bundle file that cannot be read: %v", e)
	}
	c.ok("portal", "user", "create", "--email", "eve@example.test", "--name", "Eve")
	c.refused(resources.CodeForbidden, "portal", "licence", "install", "--as", "eve@example.test", "--bundle", c.bundleFile(p))
}

// The acting person's permission is checked before the bundle, as the
// portal's page does: someone without licence-admin-global learns nothing
// of a bundle (not whether it is valid, nor whether its file is readable).
func TestPortalLicence_InstallWithoutPermission_ForbiddenBeforeTheBundleIsRead(t *testing.T) {
	c := newBareCLI(t)
	c.ok("portal", "user", "create", "--email", "eve@example.test", "--name", "Eve")
	other := licencetest.Payload("someone-else", time.Now())
	// another installation's bundle, and a file that cannot be read
	for _, file := range []string{c.bundleFile(other), filepath.Join(t.TempDir(), "missing.bundle")} {
		c.refused(resources.CodeForbidden, "portal", "licence", "install", "--as", "eve@example.test",
			"--bundle", file)
	}
}

// The demo licence is trusted by demo mode only: the same database read
// without --demo shows it invalid, and its bundle cannot be installed.
func TestDemoLicence_TrustedOnlyInDemoMode(t *testing.T) {
	c := newBareCLI(t)
	m, err := Open(t.Context(), Options{DatabaseURL: c.dsn, LicencePublicKey: licencetest.PublicKeyBase64(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := m.Handler(t.Context(), ServeOptions{Demo: true}, m.newRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.setupDemo(t.Context(), h, io.Discard); err != nil {
		t.Fatal(err)
	}
	demo, _ := m.licenceVerifier(true)
	st, err := m.store.StoredLicence(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if l := demo.Evaluate(st, time.Now()); l.State != resources.LicenceValid || l.Payload.Serial != demoSerial {
		t.Fatalf("demo mode: %+v", l)
	}
	shown := c.ok("portal", "licence", "show")
	if shown["state"] != "invalid" || shown["serial"] != nil {
		t.Fatalf("outside demo mode: %v", shown)
	}
	// Issue 18: beside serve --demo the CLI said invalid while GET /licence
	// said valid; it now says why and what serve --demo sees.
	if shown["demo_licence"] != true || shown["state_under_serve_demo"] != "valid" ||
		!strings.Contains(fmt.Sprint(shown["note"]), "serve --demo") {
		t.Fatalf("a demo licence is not explained: %v", shown)
	}
	file := filepath.Join(t.TempDir(), "demo.bundle")
	if err := os.WriteFile(file, []byte(st.Bundle), 0o600); err != nil {
		t.Fatal(err)
	}
	e := c.refused(resources.CodeLicenceBundleInvalid, "portal", "licence", "install", "--as", "root@example.test",
		"--bundle", file)
	if !strings.HasPrefix(e.Detail, "signature:") {
		t.Fatalf("demo bundle outside demo mode: %v", e)
	}
	// A second demo start keeps the licence it finds valid.
	if err := m.setupDemo(t.Context(), h, io.Discard); err != nil {
		t.Fatal(err)
	}
	installs := c.count("SELECT count(*) FROM audit_events WHERE action = 'licence.install'")
	if installs != 1 {
		t.Fatalf("demo licence installed %d times", installs)
	}
}

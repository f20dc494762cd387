package api_test

import (
	"testing"
	"time"

	"platformapi/resources/licencetest"
)

// TestLicence_Put_BundleWithSurroundingWhiteSpace_InstalledOnceAsTheBundle:
// a bundle read from a file keeps its line break; it verifies as the
// bundle, so sending it again without (or with other white space) is the
// bundle already installed: nothing changes, nothing is recorded again.
func TestLicence_Put_BundleWithSurroundingWhiteSpace_InstalledOnceAsTheBundle(t *testing.T) {
	e, tok := licenceEnv(t)
	bundle := licencetest.Bundle(licencetest.Payload(e.InstallationID(), e.Clock.Now()))
	var installedAt []any
	for _, sent := range []string{bundle + "\n", bundle, "  " + bundle + "\r\n"} {
		e.Clock.Advance(time.Second)
		r := e.Do("PUT", "/api/v1/licence", tok, map[string]any{"bundle": sent})
		if r.Status != 200 {
			t.Fatalf("PUT %q: %d %s", sent[len(sent)-4:], r.Status, r.Body)
		}
		installedAt = append(installedAt, r.JSON(t)["installed_at"])
	}
	if installedAt[1] != installedAt[0] || installedAt[2] != installedAt[0] {
		t.Fatalf("installed_at changed by the same bundle: %v", installedAt)
	}
	const installs = "SELECT count(*) FROM audit_events WHERE action = 'licence.install'"
	if n := count(t, e, installs); n != 1 {
		t.Fatalf("%d licence.install events for one bundle", n)
	}
	const padded = "SELECT count(*) FROM licence WHERE bundle <> btrim(bundle, E' \\t\\r\\n')"
	if n := count(t, e, padded); n != 0 {
		t.Fatal("the bundle is stored with its white space")
	}
}

package portal_test

import (
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/api/portal"
)

// TestREADME_PortalRoutes_FromTheRegistrations keeps the README's table of
// the portal's routes equal to what the portal registers (demo mode: every
// route), each with what it does.
func TestREADME_PortalRoutes_FromTheRegistrations(t *testing.T) {
	h := portal.New(portal.Config{Demo: true, LoginKey: make([]byte, 32)})
	var b strings.Builder
	b.WriteString("| route | what it does |\n|---|---|\n")
	for _, r := range h.Routes() {
		b.WriteString("| `" + strings.Replace(r.Pattern, "{$}", "", 1) + "` | " + r.Doc + " |\n")
	}
	if n := len(h.Routes()); n < 20 {
		t.Fatalf("only %d routes registered", n)
	}
	apitest.SyncREADMEPart(t, "../../README.md", "portal routes", b.String())
}

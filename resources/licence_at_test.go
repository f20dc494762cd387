package resources_test

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/licencetest"
)

func TestLicence_At_EqualsEvaluatingAgainAtThatMoment(t *testing.T) {
	v := resources.LicenceVerifier{Keys: []ed25519.PublicKey{licencetest.PublicKey()}}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p := licencetest.Payload("inst-1", t0)
	installed := t0
	stored := map[string]resources.StoredLicence{
		"valid bundle":      {InstallationID: "inst-1", Bundle: licencetest.Bundle(p), InstalledAt: &installed},
		"another's bundle":  {InstallationID: "inst-2", Bundle: licencetest.Bundle(p), InstalledAt: &installed},
		"tampered bundle":   {InstallationID: "inst-1", Bundle: licencetest.Bundle(p) + "x", InstalledAt: &installed},
		"nothing installed": {InstallationID: "inst-1"},
	}
	moments := map[string]time.Time{"before valid_from": p.ValidFrom.Add(-time.Second), "valid": t0,
		"grace": p.ValidUntil.Add(time.Hour), "expired": p.GraceEnds().Add(time.Hour)}
	for name, st := range stored {
		for when, at := range moments {
			t.Run(name+"/"+when, func(t *testing.T) {
				got := v.Evaluate(st, t0).At(at)
				if diff := cmp.Diff(v.Evaluate(st, at), got); diff != "" {
					t.Fatalf("At (-evaluated then +at):\n%s", diff)
				}
			})
		}
	}
}

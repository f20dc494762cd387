package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// setAPI turns the installation's API on or off, as the portal setting does.
func (a *acc) setAPI(t *testing.T, on bool) {
	t.Helper()
	admin := resources.Actor{Label: apitest.AdminEmail}
	if _, err := a.Portal.SetAPIEnabled(context.Background(), admin, on); err != nil {
		t.Fatal(err)
	}
}

// TestAcc_APISwitchedOff_PlanFailsAndStateKept: while the API is off every
// /api/v1 path answers 404 not_found. That is not "the object is gone": the
// plan fails naming the switch, and the state keeps every object (it
// planned to create them all, and an apply dropped them from the state),
// so turning the API on again plans no change.
func TestAcc_APISwitchedOff_PlanFailsAndStateKept(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	cfg := a.provider(a.token, false) + customerConfig("Acme Corporation", "", "ACME")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: cfg,
		}, {
			PreConfig:   func() { a.setAPI(t, false) },
			Config:      cfg,
			ExpectError: says("read customer failed: not_found", "the API is turned off", "portal"),
		}, {
			PreConfig: func() { a.setAPI(t, true) },
			Config:    cfg, PlanOnly: true,
		}, {
			PreConfig:   func() { a.setAPI(t, false) },
			Config:      a.provider(a.destroyer, true),
			ExpectError: says("not_found", "the API is turned off"),
		}, {
			PreConfig: func() { a.setAPI(t, true) },
			Config:    cfg, PlanOnly: true,
		}, {
			Config: a.provider(a.destroyer, true),
		}},
	})
}

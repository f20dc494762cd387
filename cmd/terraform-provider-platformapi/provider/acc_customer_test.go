package provider

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"platformapi/api/apitest"
)

// customerConfig is one customer; notes "" leaves notes out.
func customerConfig(longName, notes, shortName string) string {
	n := ""
	if notes != "" {
		n = fmt.Sprintf("  notes = %q\n", notes)
	}
	return fmt.Sprintf(`resource "platformapi_customer" "c" {
  short_name            = %q
  long_name             = %q
  vcs_group             = "acme"
  primary_contact_email = "Jane@ACME.Example"
  primary_contact_name  = "Jane Doe"
%s}
`, shortName, longName, n)
}

// onServer checks members of the object at path (with the id of addr in
// state put into path's %s) as the server has them.
func onServer(a *acc, t *testing.T, addr, path string, want map[string]any) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id := ""
		if rs, ok := s.RootModule().Resources[addr]; ok {
			id = rs.Primary.ID
		}
		return serverHas(a, t, fmt.Sprintf(path, id), want)
	}
}

// serverHas checks members of the object at path as the server has them.
func serverHas(a *acc, t *testing.T, path string, want map[string]any) error {
	got := a.get(t, path)
	sub := map[string]any{}
	for k := range want {
		sub[k] = got[k]
	}
	if d := cmp.Diff(want, sub); d != "" {
		return fmt.Errorf("%s on the server (-want +got):\n%s", path, d)
	}
	return nil
}

const cust = "platformapi_customer.c"

func TestAcc_Customer_Lifecycle(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + customerConfig("Acme Corporation", "first", "ACME"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(cust, "status", "active"),
				resource.TestCheckResourceAttr(cust, "customer_index", "1"),
				resource.TestCheckResourceAttr(cust, "billing_tier", "INTERNAL"),
				resource.TestCheckResourceAttr(cust, "primary_contact_email", "Jane@ACME.Example"),
				resource.TestCheckResourceAttrWith(cust, "id", func(v string) error { id = v; return nil }),
				onServer(a, t, cust, "/api/v1/customers/%s", map[string]any{
					"notes": "first", "primary_contact_email": "Jane@acme.example"}),
			),
		}, {
			// update: long_name changes, notes left out → null (nullable)
			Config: a.provider(a.token, false) + customerConfig("Acme Corp", "", "ACME"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(cust, plancheck.ResourceActionUpdate)}},
			Check: onServer(a, t, cust, "/api/v1/customers/%s", map[string]any{"long_name": "Acme Corp", "notes": nil}),
		}, {
			ResourceName: cust, ImportState: true, ImportStateVerify: true,
			// the server's normalised spelling of the configured address
			ImportStateVerifyIgnore: []string{"primary_contact_email"},
		}, {
			// drift: changed outside Terraform, planned back and restored
			PreConfig: func() {
				if r := a.Do("PATCH", "/api/v1/customers/"+id, a.token, map[string]any{"long_name": "Renamed"}); r.Status != 200 {
					t.Fatalf("patch: %d %s", r.Status, r.Body)
				}
			},
			Config: a.provider(a.token, false) + customerConfig("Acme Corp", "", "ACME"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(cust, plancheck.ResourceActionUpdate)}},
			Check: onServer(a, t, cust, "/api/v1/customers/%s", map[string]any{"long_name": "Acme Corp"}),
		}, {
			// a problem's field becomes the attribute path of the diagnostic
			Config:      a.provider(a.token, false) + customerConfig("ab", "", "ACME"),
			ExpectError: says("validation_failed", `long_name = "ab"`, "field: long_name"),
		}, {
			Config:      a.provider(a.token, true) + customerConfig("Acme Corp", "", "ACMX"),
			PlanOnly:    true,
			ExpectError: says("short_name is frozen"),
		}, {
			Config:      a.provider(a.token, false),
			ExpectError: says("destroy refused: allow_destroy is not set", `would archive the customer "ACME"`),
		}, {
			Config:      a.provider(a.token, true),
			ExpectError: says("the API token has no Allow destroy", "destroy_not_allowed", "minted with Allow destroy"),
		}, {
			Config: a.provider(a.destroyer, true),
		}},
		CheckDestroy: func(*terraform.State) error {
			if got := a.get(t, "/api/v1/customers/"+id)["status"]; got != "archived" {
				return fmt.Errorf("status %v, want archived", got)
			}
			return nil
		},
	})
}

// TestAcc_CustomerDataSource_IdAndShortName_Refused: with both set the
// data source read the id and ignored short_name, so a configuration
// naming ACME could silently get another customer.
func TestAcc_CustomerDataSource_IdAndShortName_Refused(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	other := a.created(t, "/api/v1/customers", map[string]any{"short_name": "GLOBEX", "long_name": "Globex",
		"vcs_group": "globex", "primary_contact_email": "h@globex.example", "primary_contact_name": "Hank"})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + customerConfig("Acme Corporation", "", "ACME") +
				"data \"platformapi_customer\" \"d\" {\n  id = \"" + other + "\"\n" +
				"  short_name = platformapi_customer.c.short_name\n}\n",
			ExpectError: says("read customer failed", "set id or short_name, not both"),
		}, {
			Config: a.provider(a.destroyer, true),
		}},
	})
}

// TestAcc_ValidationFailed_DiagnosticSaysWhy: a 422 validation_failed
// said only "validation failed" and the field; the problem's errors say
// why (the pattern, the length), and the diagnostic now shows them.
func TestAcc_ValidationFailed_DiagnosticSaysWhy(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + customerConfig("Acme Corporation", "", "Acme"),
			ExpectError: says("create customer failed: validation_failed", `short_name = "Acme"`,
				"body.short_name: expected string to match pattern ^[A-Z][A-Z0-9]{1,15}$", "field: short_name"),
		}},
	})
}

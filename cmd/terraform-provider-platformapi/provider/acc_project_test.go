package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"platformapi/api/apitest"
)

// projectConfig is a customer, a project with its components and domain,
// and the project's PROD data lock.
func projectConfig(name, components, lock string) string {
	return customerConfig("Acme Corporation", "", "ACME") + fmt.Sprintf(`
resource "platformapi_project" "p" {
  customer_id = platformapi_customer.c.id
  short_name  = "SHOP"
  name        = %q
  kind        = "cluster"
  components  = %s
  domain      = "shop.acme.example"
  timeouts {
    create = "2m"
  }
}
resource "platformapi_prod_lock" "l" {
  project_id = platformapi_project.p.id
%s}
`, name, components, lock)
}

// removedCustomer stops managing the customer without archiving it.
const removedCustomer = `removed {
  from = platformapi_customer.c
  lifecycle {
    destroy = false
  }
}
`

const (
	proj = "platformapi_project.p"
	lock = "platformapi_prod_lock.l"
)

func TestAcc_Project_CreateWaitsOnOperation_LockAndRetire(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	locked, id := "  locked = true\n", ""
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + projectConfig("Web shop", `["app-api"]`, locked),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(proj, "status", "active"),
				resource.TestCheckResourceAttrWith(proj, "id", func(v string) error { id = v; return nil }),
				resource.TestCheckResourceAttr(proj, "platform", "false"),
				resource.TestCheckResourceAttrPair(proj, "tenant_id", "platformapi_customer.c", "id"),
				resource.TestCheckResourceAttr(lock, "locked", "true"),
				onServer(a, t, proj, "/api/v1/projects/%s/prod-lock", map[string]any{"locked": true}),
			),
		}, {
			Config: a.provider(a.token, false) + projectConfig("Web shop 2", `["app-api", "www"]`, locked),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(proj, plancheck.ResourceActionUpdate)}},
			Check: onServer(a, t, proj, "/api/v1/projects/%s", map[string]any{
				"name": "Web shop 2", "components": []any{"app-api", "www"}, "domain": "shop.acme.example"}),
		}, {
			ResourceName: proj, ImportState: true, ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"timeouts"},
		}, {
			ResourceName: lock, ImportState: true, ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"confirm_unlock"},
		}, {
			Config: a.provider(a.token, false) + projectConfig("Web shop 2", `["app-api", "www"]`,
				"  locked = false\n  confirm_unlock = \"WRONG\"\n"),
			ExpectError: says("unlock_not_confirmed"),
		}, {
			Config: a.provider(a.token, false) + projectConfig("Web shop 2", `["app-api", "www"]`,
				"  locked = false\n  confirm_unlock = \"SHOP\"\n"),
			Check: onServer(a, t, proj, "/api/v1/projects/%s/prod-lock", map[string]any{"locked": false}),
		}, {
			Config:      a.provider(a.destroyer, false) + customerConfig("Acme Corporation", "", "ACME"),
			ExpectError: says(`would retire the project "SHOP"`),
		}, {
			Config: a.provider(a.destroyer, true) + customerConfig("Acme Corporation", "", "ACME"),
			Check: func(*terraform.State) error {
				return serverHas(a, t, "/api/v1/projects/"+id, map[string]any{"status": "retired"})
			},
		}, {
			// a customer with projects (retired ones count) cannot be
			// archived: stop managing it instead
			Config: a.provider(a.destroyer, true) + removedCustomer,
		}},
	})
}

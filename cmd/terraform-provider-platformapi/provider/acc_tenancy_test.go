package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"platformapi/api/apitest"
)

// tenancyConfig is a customer's second tenant and an invited person.
func tenancyConfig(slug, tenantName, email, roles string) string {
	return customerConfig("Acme Corporation", "", "ACME") + fmt.Sprintf(`
resource "platformapi_tenant" "t" {
  customer_id = platformapi_customer.c.id
  slug        = %q
  name        = %q
}
resource "platformapi_user" "u" {
  email        = %q
  display_name = "Sam Doe"
  roles        = %s
}
`, slug, tenantName, email, roles)
}

const (
	tenant = "platformapi_tenant.t"
	user   = "platformapi_user.u"
)

func TestAcc_TenantAndUser_Lifecycle(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	var userID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + tenancyConfig("acme-labs", "Labs", "Sam@Example.COM", `[]`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(tenant, "primary", "false"),
				resource.TestCheckResourceAttr(user, "status", "active"),
				resource.TestCheckResourceAttr(user, "email", "Sam@Example.COM"),
				resource.TestCheckResourceAttrWith(user, "id", func(v string) error { userID = v; return nil }),
			),
		}, {
			Config: a.provider(a.token, false) + tenancyConfig("acme-labs", "Labs 2", "Sam@Example.COM", `["admin"]`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(tenant, plancheck.ResourceActionUpdate)}},
			// admin is never on a token: the API refuses, naming the key
			ExpectError: says("update user failed: role_not_grantable", "with platformapi_user.u", "it lacks admin"),
		}, {
			Config: a.provider(a.token, false) + tenancyConfig("acme-labs", "Labs 2", "Sam@Example.COM", `[]`),
			Check:  onServer(a, t, tenant, "/api/v1/tenants/%s", map[string]any{"name": "Labs 2"}),
		}, {
			ResourceName: tenant, ImportState: true, ImportStateVerify: true,
		}, {
			ResourceName: user, ImportState: true, ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"email"},
		}, {
			Config:      a.provider(a.token, true) + tenancyConfig("acme-labs", "Labs 2", "other@example.com", `[]`),
			PlanOnly:    true,
			ExpectError: says("email is frozen"),
		}, {
			// a slug change replaces the tenant: a delete, refused at plan time
			Config:      a.provider(a.token, false) + tenancyConfig("acme-lab2", "Labs 2", "Sam@Example.COM", `[]`),
			ExpectError: says(`would delete the tenant "acme-labs"`, "to replace it, because slug changed"),
		}, {
			Config: a.provider(a.destroyer, true) + tenancyConfig("acme-lab2", "Labs 2", "Sam@Example.COM", `[]`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(tenant, plancheck.ResourceActionDestroyBeforeCreate)}},
			Check: resource.TestCheckResourceAttr(tenant, "slug", "acme-lab2"),
		}, {
			Config: a.provider(a.destroyer, true) + removedCustomer,
			Check: func(*terraform.State) error {
				return serverHas(a, t, "/api/v1/users/"+userID, map[string]any{"status": "deactivated"})
			},
		}},
	})
}

// TestAcc_Tenant_RecreatedAfterDelete_NotTheReplayedOne: the same
// configuration derives the same Idempotency-Key, so re-creating a deleted
// tenant within 24 hours gets the first create replayed; the provider sees
// that tenant is gone and creates a new one under a superseding key.
func TestAcc_Tenant_RecreatedAfterDelete_NotTheReplayedOne(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	tenantOnly := `
resource "platformapi_tenant" "t" {
  customer_id = platformapi_customer.c.id
  slug        = "acme-labs"
  name        = "Labs"
}
`
	base := a.provider(a.destroyer, true) + customerConfig("Acme Corporation", "", "ACME")
	var first string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: base + tenantOnly,
			Check:  resource.TestCheckResourceAttrWith(tenant, "id", func(v string) error { first = v; return nil }),
		}, {
			Config: base,
		}, {
			Config: base + tenantOnly,
			Check: resource.TestCheckResourceAttrWith(tenant, "id", func(v string) error {
				if v == first {
					return fmt.Errorf("the deleted tenant %s came back", v)
				}
				return serverHas(a, t, "/api/v1/tenants/"+v, map[string]any{"slug": "acme-labs"})
			}),
		}},
	})
}

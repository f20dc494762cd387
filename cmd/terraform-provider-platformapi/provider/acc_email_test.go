package provider

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"platformapi/api/apitest"
)

// TestAcc_EquivalentEmail_ImportedOrRespelled_PlansNoChange: an address
// the API stores as the one it holds (the domain's case, a "Name <…>" form)
// is no change. After an import (state: the server's spelling) a user's
// email in another spelling was a plan-time "email is frozen" error naming
// the same address twice, and a customer's contact planned an update; a
// user whose configuration was respelled to the stored form failed alike.
func TestAcc_EquivalentEmail_ImportedOrRespelled_PlansNoChange(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	userID := a.created(t, "/api/v1/users", map[string]any{"email": "sam@example.com", "display_name": "Sam Doe"})
	customerID := a.created(t, "/api/v1/customers", map[string]any{"short_name": "ACME",
		"long_name": "Acme Corporation", "vcs_group": "acme", "primary_contact_email": "Jane@acme.example",
		"primary_contact_name": "Jane Doe"})
	// customerConfig's contact is spelled Jane@ACME.Example
	cfg := func(email string) string {
		return a.provider(a.token, false) + customerConfig("Acme Corporation", "", "ACME") +
			"resource \"platformapi_user\" \"u\" {\n  email = \"" + email + "\"\n  display_name = \"Sam Doe\"\n}\n"
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: cfg("Sam Doe <sam@EXAMPLE.com>"), ResourceName: user, ImportState: true,
			ImportStateId: userID, ImportStatePersist: true,
		}, {
			Config: cfg("Sam Doe <sam@EXAMPLE.com>"), ResourceName: cust, ImportState: true,
			ImportStateId: customerID, ImportStatePersist: true,
		}, {
			Config: cfg("Sam Doe <sam@EXAMPLE.com>"), PlanOnly: true,
		}, {
			Config: cfg("sam@Example.com"), PlanOnly: true,
		}, {
			Config: a.provider(a.destroyer, true),
		}},
	})
}

// created posts body to path with the token and returns the new object's id.
func (a *acc) created(t *testing.T, path string, body map[string]any) string {
	t.Helper()
	r := a.Do("POST", path, a.token, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	var v struct{ ID string }
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatal(err)
	}
	return v.ID
}

package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"platformapi/api/apitest"
)

// exampleBaseURL is the base_url of examples/provider/provider.tf.
const exampleBaseURL = "https://portal.example.internal"

// exampleFile is the text of an example, by its path under examples.
func exampleFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, rel))
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	return string(b)
}

// providerExample is examples/provider/provider.tf from its provider block
// on (the test harness serves the provider in-process, so the registry
// source of its terraform block is left out), with base_url pointing at
// the test server; the token comes from PLATFORMAPI_TOKEN as in the example.
func (a *acc) providerExample(t *testing.T) string {
	t.Helper()
	src := exampleFile(t, "provider/provider.tf")
	i := strings.Index(src, `provider "platformapi" {`)
	if i < 0 || !strings.Contains(src[i:], exampleBaseURL) {
		t.Fatalf("provider.tf has no provider block with base_url %q", exampleBaseURL)
	}
	return strings.Replace(src[i:], exampleBaseURL, a.HTTP.URL, 1)
}

// importID is the id of the terraform import line of a resource's import.sh.
func importID(t *testing.T, name string) string {
	t.Helper()
	for _, line := range strings.Split(exampleFile(t, "resources/"+name+"/import.sh"), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "terraform" && f[1] == "import" {
			return f[3]
		}
	}
	t.Fatalf("%s/import.sh has no terraform import line", name)
	return ""
}

// TestAcc_Examples_ApplyAgainstServer applies the provider example (its
// token from PLATFORMAPI_TOKEN, allow_destroy false) with the examples of
// a customer, a catalogue row, a gateway key, the brand and four data
// sources to a real server: the objects are there as written, no change is
// planned after the apply, the brand imports with the id of its import.sh,
// and a destroy-capable run archives, deletes and revokes them.
func TestAcc_Examples_ApplyAgainstServer(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	t.Setenv(EnvToken, a.token)
	t.Setenv(EnvBaseURL, "")
	cfg := a.providerExample(t)
	for _, f := range []string{"resources/platformapi_customer/resource.tf",
		"resources/platformapi_ai_model/resource.tf", "resources/platformapi_ai_gateway_key/resource.tf",
		"resources/platformapi_brand/resource.tf", "data-sources/platformapi_whoami/data-source.tf",
		"data-sources/platformapi_meta/data-source.tf"} {
		cfg += "\n" + exampleFile(t, f)
	}
	// The catalogue's data sources, once the row exists (read at plan time,
	// before it, their outputs would change after the apply).
	withCatalogue := cfg + "\n" +
		exampleFile(t, "data-sources/platformapi_ai_gateway/data-source.tf") + "\n" +
		exampleFile(t, "data-sources/platformapi_ai_models/data-source.tf")
	const customer, brand = "platformapi_customer.wayne", "platformapi_brand.this"
	var customerID, modelID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttrWith(customer, "id",
					func(v string) error { customerID = v; return nil }),
				onServer(a, t, customer, "/api/v1/customers/%s", map[string]any{"short_name": "WAYNE",
					"billing_tier": "PAYING", "status": "active", "notes": "Managed by Terraform."}),
				resource.TestCheckResourceAttrWith("platformapi_ai_model.coder", "id",
					func(v string) error { modelID = v; return nil }),
				onServer(a, t, "platformapi_ai_model.coder", "/api/v1/ai/models/%s", map[string]any{
					"repo": "acme-labs/coder-7b", "category": "coding", "status": "planned"}),
				resource.TestCheckResourceAttrWith("platformapi_ai_gateway_key.ci", "value", func(v string) error {
					if !strings.HasPrefix(v, "sk-gw-") {
						return fmt.Errorf("gateway key value %q", v)
					}
					return nil
				}),
				serverHasFunc(a, t, "/api/v1/brand", map[string]any{"brand_color": "#0f766e"}),
				resource.TestCheckResourceAttr("data.platformapi_whoami.me", "token.allow_destroy", "false"),
				resource.TestCheckResourceAttrSet("data.platformapi_meta.this", "api_version"),
			),
		}, {
			Config: withCatalogue,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.platformapi_ai_models.coding", "items.#", "1"),
				resource.TestCheckResourceAttr("data.platformapi_ai_models.coding", "items.0.repo",
					"acme-labs/coder-7b"),
				resource.TestCheckResourceAttr("data.platformapi_ai_gateway.gw", "tiers.0", "standard"),
				resource.TestCheckResourceAttrSet("data.platformapi_ai_gateway.gw", "base_url"),
			),
		}, {
			// imported alone: outputs of objects not imported would be null
			Config:       a.providerExample(t) + exampleFile(t, "resources/platformapi_brand/resource.tf"),
			ResourceName: brand, ImportState: true, ImportStateId: importID(t, "platformapi_brand"),
			// brand_color is read back lower-case
			ImportStateVerify: true, ImportStateVerifyIgnore: []string{"brand_color"},
		}, {
			Config: a.provider(a.destroyer, true),
			Check: func(*terraform.State) error {
				if r := a.Do("GET", "/api/v1/ai/models/"+modelID, a.destroyer, nil); r.Status != 404 {
					return fmt.Errorf("the catalogue row after destroy: %d %s", r.Status, r.Body)
				}
				return serverHas(a, t, "/api/v1/customers/"+customerID, map[string]any{"status": "archived"})
			},
		}},
	})
}

// serverHasFunc is serverHas as a check.
func serverHasFunc(a *acc, t *testing.T, path string, want map[string]any) resource.TestCheckFunc {
	return func(*terraform.State) error { return serverHas(a, t, path, want) }
}

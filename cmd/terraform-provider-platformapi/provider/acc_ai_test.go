package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// aiConfig is a catalogue row and a gateway key.
func aiConfig(summary, keyName string, returnValue bool) string {
	s := ""
	if summary != "" {
		s = fmt.Sprintf("  summary = %q\n", summary)
	}
	return fmt.Sprintf(`resource "platformapi_ai_model" "m" {
  repo          = "acme-labs/coder-7b"
  gateway_tier  = "standard"
  param_count_b = 7.5
  benchmarks    = jsonencode({ humaneval = 71.3, arena = "A" })
%s}
resource "platformapi_ai_gateway_key" "k" {
  name         = %q
  tier         = "standard"
  return_value = %t
}
`, s, keyName, returnValue)
}

const (
	model = "platformapi_ai_model.m"
	gwKey = "platformapi_ai_gateway_key.k"
)

func TestAcc_AIModelAndGatewayKey_Lifecycle(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	var value string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + aiConfig("Small coder", "ci", false),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(model, "status", "planned"),
				resource.TestCheckResourceAttr(model, "display_name", "coder-7b"),
				resource.TestCheckResourceAttr(model, "node_caches.#", "0"),
				resource.TestCheckResourceAttr(gwKey, "status", "active"),
				resource.TestCheckNoResourceAttr(gwKey, "value"),
				onServer(a, t, model, "/api/v1/ai/models/%s", map[string]any{
					"benchmarks": map[string]any{"humaneval": 71.3, "arena": "A"}, "summary": "Small coder"}),
			),
		}, {
			// summary left out: null is sent (nullable); asking for the value rotates
			Config: a.provider(a.token, false) + aiConfig("", "ci", true),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(model, plancheck.ResourceActionUpdate),
				plancheck.ExpectSensitiveValue(gwKey, tfjsonpath.New("value")),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				onServer(a, t, model, "/api/v1/ai/models/%s", map[string]any{"summary": nil}),
				resource.TestCheckResourceAttrWith(gwKey, "value", func(v string) error {
					if value = v; !strings.HasPrefix(v, "sk-gw-") {
						return fmt.Errorf("value %q", v)
					}
					return nil
				}),
				func(*terraform.State) error { return keyWorks(a, value) },
			),
		}, {
			ResourceName: model, ImportState: true, ImportStateVerify: true,
		}, {
			ResourceName: gwKey, ImportState: true, ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"return_value", "value"},
		}, {
			Config:      a.provider(a.token, false) + aiConfig("", "ci-2", true),
			ExpectError: says(`would revoke the AI gateway key "ci"`, "because name changed"),
		}, {
			Config: a.provider(a.destroyer, true) + aiConfig("", "ci-2", true),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(gwKey, plancheck.ResourceActionDestroyBeforeCreate)}},
			Check: resource.TestCheckResourceAttrWith(gwKey, "value", func(v string) error {
				if v == value || !strings.HasPrefix(v, "sk-gw-") {
					return fmt.Errorf("value %q after replacement", v)
				}
				return nil
			}),
		}, {
			Config: a.provider(a.destroyer, true),
		}},
	})
}

// keyWorks checks value opens the gateway (/ai-gateway/verify answers 200).
func keyWorks(a *acc, value string) error {
	if r := a.Do("GET", resources.GatewayVerifyPath, value, nil); r.Status != 200 {
		return fmt.Errorf("the stored value is not a live key: verify answered %d %s", r.Status, r.Body)
	}
	return nil
}

func TestAcc_DataSources_ReadTheAPI(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	f, err := resources.ParseInventory("roster.yaml", []byte("nodes:\n  - {hostname: gpu-01, gpu_class: H100, site: fra1}\n"+
		"  - {hostname: gpu-02, gpu_class: L40S, site: ams1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.ImportInventory(context.Background(), resources.Actor{Label: apitest.AdminEmail}, f); err != nil {
		t.Fatal(err)
	}
	online, role := true, "head"
	a.Monitor.Set("gpu-01", resources.NodeLive{Online: &online, Cluster: &resources.NodeCluster{Name: "fra1", Role: &role},
		Models: []resources.NodeModel{{Model: "coder"}}})
	cfg := a.provider(a.token, false) + aiConfig("Small coder", "ci", false) + customerConfig("Acme", "", "ACME") + `
data "platformapi_whoami" "me" {}
data "platformapi_meta" "m" {}
data "platformapi_customer" "c" {
  short_name = platformapi_customer.c.short_name
}
data "platformapi_ai_models" "all" {
  gateway_tier = platformapi_ai_model.m.gateway_tier
}
data "platformapi_ai_models" "none" {
  q = "no-such-model"
}
output "no_models" {
  value = length(data.platformapi_ai_models.none.items) # fails if items is null
}
data "platformapi_ai_nodes" "fra1" {
  site = "fra1"
}
data "platformapi_ai_gateway" "gw" {
  depends_on = [platformapi_ai_model.m]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.platformapi_whoami.me", "principal.email", apitest.AdminEmail),
				resource.TestCheckResourceAttr("data.platformapi_whoami.me", "token.allow_destroy", "false"),
				resource.TestCheckResourceAttr("data.platformapi_meta.m", "api_version", resources.APIVersion),
				resource.TestCheckResourceAttrPair("data.platformapi_customer.c", "id", "platformapi_customer.c", "id"),
				resource.TestCheckResourceAttr("data.platformapi_customer.c", "vcs_group", "acme"),
				resource.TestCheckResourceAttr("data.platformapi_ai_models.all", "items.#", "1"),
				resource.TestCheckResourceAttr("data.platformapi_ai_models.all", "items.0.repo", "acme-labs/coder-7b"),
				resource.TestCheckOutput("no_models", "0"),
				resource.TestCheckResourceAttr("data.platformapi_ai_nodes.fra1", "items.#", "1"),
				resource.TestCheckResourceAttr("data.platformapi_ai_nodes.fra1", "items.0.online", "true"),
				resource.TestCheckResourceAttr("data.platformapi_ai_nodes.fra1", "items.0.cluster.role", "head"),
				resource.TestCheckResourceAttr("data.platformapi_ai_nodes.fra1", "items.0.models.0.model", "coder"),
				resource.TestCheckResourceAttr("data.platformapi_ai_gateway.gw", "tiers.0", "standard"),
			),
		}, {
			Config: a.provider(a.destroyer, true),
		}},
	})
}

// TestAcc_GatewayKeyImported_PlansNoChange: a key imported into a
// configuration that matches it (return_value left at its default) plans
// no change; it planned an in-place update (return_value null to false,
// status and value unknown) that did nothing.
func TestAcc_GatewayKeyImported_PlansNoChange(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	body := map[string]any{"name": "shop", "tier": "chat"}
	r := a.Do("POST", "/api/v1/ai/gateway/keys", a.token, body)
	if r.Status != 201 {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	var key struct{ ID string }
	if err := json.Unmarshal(r.Body, &key); err != nil {
		t.Fatal(err)
	}
	cfg := a.provider(a.token, false) +
		"resource \"platformapi_ai_gateway_key\" \"k\" {\n  name = \"shop\"\n  tier = \"chat\"\n}\n"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: cfg, ResourceName: gwKey, ImportState: true, ImportStateId: key.ID,
			ImportStatePersist: true,
		}, {
			Config: cfg, PlanOnly: true,
		}, {
			Config: a.provider(a.destroyer, true),
		}},
	})
}

// TestAcc_AINodes_StatusFilter_TheExampleReads applies the ai_nodes
// example (status = "serving"): the API's status filter takes a list, and
// the provider failed every status filter before sending it.
func TestAcc_AINodes_StatusFilter_TheExampleReads(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	f, err := resources.ParseInventory("roster.yaml", []byte("nodes:\n  - {hostname: gpu-01, site: fra1}\n"+
		"  - {hostname: gpu-02, site: fra1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.ImportInventory(context.Background(), resources.Actor{Label: apitest.AdminEmail}, f); err != nil {
		t.Fatal(err)
	}
	serving, idle := "serving", "idle"
	a.Monitor.Set("gpu-01", resources.NodeLive{Status: &serving})
	a.Monitor.Set("gpu-02", resources.NodeLive{Status: &idle})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(a.token, false) + exampleFile(t, "data-sources/platformapi_ai_nodes/data-source.tf"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.platformapi_ai_nodes.serving", "items.#", "1"),
				resource.TestCheckResourceAttr("data.platformapi_ai_nodes.serving", "items.0.hostname", "gpu-01"),
			),
		}},
	})
}

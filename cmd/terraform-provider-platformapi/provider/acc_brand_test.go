package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"platformapi/api/apitest"
)

const brand = "platformapi_brand.b"

// brandConfig is the brand; an empty asset id is left out.
func brandConfig(color, logo, favicon string) string {
	s := fmt.Sprintf("resource \"platformapi_brand\" \"b\" {\n  brand_color = %q\n", color)
	if logo != "" {
		s += fmt.Sprintf("  logo_asset_id = %q\n", logo)
	}
	if favicon != "" {
		s += fmt.Sprintf("  favicon_asset_id = %q\n", favicon)
	}
	return s + "}\n"
}

// uploadAsset uploads a small PNG (shade makes it distinct) as a brand
// asset of kind and returns its id.
func (a *acc) uploadAsset(t *testing.T, kind string, shade uint8) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: shade, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	r := a.Do("POST", "/api/v1/brand/assets?kind="+kind, a.token, b.String(), "Content-Type", "image/png")
	if r.Status != 201 {
		t.Fatalf("upload %s: %d %s", kind, r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// putBrandOutside replaces the brand over REST, as someone outside
// Terraform would (nil asset: cleared).
func (a *acc) putBrandOutside(color string, logo, favicon any) error {
	r := a.Do("PUT", "/api/v1/brand", a.token,
		map[string]any{"brand_color": color, "logo_asset_id": logo, "favicon_asset_id": favicon})
	if r.Status != 200 {
		return fmt.Errorf("PUT /brand: %d %s", r.Status, r.Body)
	}
	return nil
}

// planCheck is a plan check written as a function.
type planCheck func(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse)

// CheckPlan runs the function.
func (f planCheck) CheckPlan(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	f(ctx, req, resp)
}

// refreshedBefore checks members of addr's prior state in the plan, that
// is the state as the plan's refresh read it from the server.
func refreshedBefore(addr string, want map[string]any) plancheck.PlanCheck {
	return planCheck(func(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		for _, rc := range req.Plan.ResourceChanges {
			if rc.Address != addr {
				continue
			}
			before, _ := rc.Change.Before.(map[string]any)
			got := map[string]any{}
			for k := range want {
				got[k] = before[k]
			}
			if d := cmp.Diff(want, got); d != "" {
				resp.Error = fmt.Errorf("%s before the change (-want +got):\n%s", addr, d)
			}
			return
		}
		resp.Error = fmt.Errorf("%s not in the plan", addr)
	})
}

func TestAcc_Brand_AdoptUpdateImportDriftStaleRemove(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	oldLogo, favicon, logo := a.uploadAsset(t, "logo", 1), a.uploadAsset(t, "favicon", 2), a.uploadAsset(t, "logo", 3)
	if err := a.putBrandOutside("#111111", oldLogo, favicon); err != nil { // version 2
		t.Fatal(err)
	}
	p := a.provider(a.token, false)
	onBrand := func(want map[string]any) resource.TestCheckFunc {
		return func(*terraform.State) error { return serverHas(a, t, "/api/v1/brand", want) }
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			// create adopts the brand and puts the configuration: assets
			// left out are cleared; the upper-case colour plans no change
			// afterwards (the test fails on a non-empty plan after apply)
			Config: p + brandConfig("#1D4ED8", "", ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(brand, "id", "brand"),
				resource.TestCheckResourceAttr(brand, "brand_color", "#1D4ED8"),
				resource.TestCheckResourceAttr(brand, "version", "3"),
				resource.TestCheckResourceAttr(brand, "first_party", "false"),
				resource.TestCheckResourceAttr(brand, "attribution", "Powered by Cloud Platform"),
				resource.TestCheckNoResourceAttr(brand, "logo_asset_id"),
				onBrand(map[string]any{"brand_color": "#1d4ed8", "logo_asset_id": nil,
					"favicon_asset_id": nil, "version": 3.0}),
			),
		}, {
			Config: p + brandConfig("#0F766E", logo, favicon),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(brand, plancheck.ResourceActionUpdate),
				plancheck.ExpectUnknownValue(brand, tfjsonpath.New("version")),
			}},
			Check: onBrand(map[string]any{"brand_color": "#0f766e", "logo_asset_id": logo,
				"favicon_asset_id": favicon, "version": 4.0}),
		}, {
			ResourceName: brand, ImportState: true, ImportStateId: "brand", ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"brand_color"}, // read back lower-case
		}, {
			ResourceName: brand, ImportState: true, ImportStateId: "1",
			ExpectError: says(`import platformapi_brand with the id "brand", not "1"`),
		}, {
			// drift: changed outside; the refresh sees it and the plan puts it back
			PreConfig: func() {
				if err := a.putBrandOutside("#ABCDEF", nil, favicon); err != nil {
					t.Fatal(err)
				}
			},
			Config: p + brandConfig("#0F766E", logo, favicon),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				refreshedBefore(brand, map[string]any{"brand_color": "#abcdef", "logo_asset_id": nil,
					"version": json.Number("5")}),
				plancheck.ExpectResourceAction(brand, plancheck.ResourceActionUpdate),
			}},
			Check: onBrand(map[string]any{"brand_color": "#0f766e", "logo_asset_id": logo, "version": 6.0}),
		}, {
			// changed outside between plan and apply: the If-Match of the
			// planned version is stale, the PUT is refused, nothing changes
			Config: p + brandConfig("#7C3AED", logo, favicon),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				planCheck(func(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
					resp.Error = a.putBrandOutside("#FF0000", logo, favicon)
				}),
			}},
			ExpectError: says("update brand refused: the brand changed outside Terraform",
				"Nothing was changed", "Run terraform plan", "precondition_failed (HTTP 412)"),
		}, {
			Config: p + brandConfig("#7C3AED", logo, favicon),
			PreConfig: func() {
				if err := serverHas(a, t, "/api/v1/brand", map[string]any{"brand_color": "#ff0000",
					"version": 7.0}); err != nil {
					t.Fatal(err)
				}
			},
			Check: onBrand(map[string]any{"brand_color": "#7c3aed", "version": 8.0}),
		}, {
			Config:      p + brandConfig("blue", logo, favicon),
			PlanOnly:    true,
			ExpectError: says("invalid brand_color", `"blue" is not # and six hexadecimal digits`),
		}, {
			// removal forgets (no destroy switch needed, no API call)
			Config: p,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(brand, plancheck.ResourceActionDestroy)}},
			Check: onBrand(map[string]any{"brand_color": "#7c3aed", "logo_asset_id": logo, "version": 8.0}),
		}, {
			// imported again with an upper-case colour: no change planned
			Config:       p + brandConfig("#7C3AED", logo, favicon),
			ResourceName: brand, ImportState: true, ImportStateId: "brand", ImportStatePersist: true,
		}, {
			Config:   p + brandConfig("#7C3AED", logo, favicon),
			PlanOnly: true,
		}},
		CheckDestroy: func(*terraform.State) error {
			return serverHas(a, t, "/api/v1/brand", map[string]any{"brand_color": "#7c3aed", "version": 8.0})
		},
	})
}

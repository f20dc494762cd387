package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

func TestSameCase_PlansTheStatesSpellingOnlyForACaseDifference(t *testing.T) {
	null := types.StringNull()
	tests := []struct {
		name               string
		state, config, out types.String
	}{
		{"upper-case config, lower-case state", types.StringValue("#2563eb"), types.StringValue("#2563EB"),
			types.StringValue("#2563eb")},
		{"another colour", types.StringValue("#2563eb"), types.StringValue("#2563EC"), types.StringValue("#2563EC")},
		{"create (no state)", null, types.StringValue("#2563EB"), types.StringValue("#2563EB")},
		{"unknown config", types.StringValue("#2563eb"), types.StringUnknown(), types.StringUnknown()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := planmodifier.StringRequest{StateValue: tc.state, ConfigValue: tc.config, PlanValue: tc.config}
			resp := &planmodifier.StringResponse{PlanValue: tc.config}
			sameCase{}.PlanModifyString(context.Background(), req, resp)
			if !resp.PlanValue.Equal(tc.out) {
				t.Fatalf("planned %s, want %s", resp.PlanValue, tc.out)
			}
		})
	}
}

func TestColorValidator_HashAndSixHexDigitsEitherCase(t *testing.T) {
	for in, ok := range map[string]bool{"#2563eb": true, "#2563EB": true, "#000000": true, "2563eb": false,
		"#2563e": false, "#2563ebb": false, "#2563eg": false, "blue": false, "": false} {
		resp := &validator.StringResponse{}
		colorValidator{}.ValidateString(context.Background(),
			validator.StringRequest{Path: path.Root("brand_color"), ConfigValue: types.StringValue(in)}, resp)
		if resp.Diagnostics.HasError() == ok {
			t.Errorf("%q: accepted %t, want %t", in, !resp.Diagnostics.HasError(), ok)
		}
	}
}

func TestAddError_PreconditionFailedSaysItChangedOutsideTerraform(t *testing.T) {
	err := &apiError{Status: 412, Problem: platformclient.Problem{Code: "precondition_failed",
		Detail: "the brand is at version 4; read it again and resend"}}
	var diags diag.Diagnostics
	addError(&diags, "update brand", err, nil)
	d := diags[0]
	if d.Summary() != "platformapi: update brand refused: the brand changed outside Terraform" ||
		!strings.HasPrefix(d.Detail(), "The brand changed outside Terraform") ||
		!strings.Contains(d.Detail(), "Run terraform plan") ||
		!strings.Contains(d.Detail(), "code: precondition_failed (HTTP 412)") {
		t.Fatalf("summary %q detail %q", d.Summary(), d.Detail())
	}
}

// brandState is a brand object as state holds it after a PUT.
func brandState(t *testing.T, color string, version int) attrs {
	return objectOf(t, brandKind, map[string]any{"id": "brand", "brand_color": color, "first_party": false,
		"attribution": "Powered by Cloud Platform", "version": json.Number(strconv.Itoa(version)),
		"updated_at": "2026-11-01T12:00:00Z"})
}

func brandObject(m attrs) tftypes.Value {
	return tftypes.NewValue(brandKind.schema.Type().TerraformType(context.Background()), m)
}

func TestModifyPlan_NoConfiguredChangeKeepsTheComputedMembers(t *testing.T) {
	r := &genericResource{k: brandKind}
	state := brandState(t, "#2563eb", 3)
	tests := map[string]struct {
		color       string
		keepVersion bool
	}{
		"same colour (the case modifier already planned state's)": {"#2563eb", true},
		"another colour": {"#000000", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			plan := brandState(t, tc.color, 0)
			plan["version"] = tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)
			plan["updated_at"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
			req := resource.ModifyPlanRequest{State: tfsdk.State{Schema: brandKind.schema, Raw: brandObject(state)},
				Plan: tfsdk.Plan{Schema: brandKind.schema, Raw: brandObject(plan)}}
			resp := &resource.ModifyPlanResponse{Plan: req.Plan}
			r.ModifyPlan(context.Background(), req, resp)
			got := objectAttrs(resp.Plan.Raw)
			kept := got["version"].Equal(state["version"]) && got["updated_at"].Equal(state["updated_at"])
			if kept != tc.keepVersion {
				t.Fatalf("version %s updated_at %s: kept %t, want %t",
					got["version"], got["updated_at"], kept, tc.keepVersion)
			}
		})
	}
}

func TestBrandRemoval_ForgetsWithAWarningAndSendsNothing(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, "svc_pat_x", "test", false)
	if err != nil {
		t.Fatal(err)
	}
	r := &genericResource{k: brandKind, c: c}
	st := tfsdk.State{Schema: brandKind.schema, Raw: brandObject(brandState(t, "#2563eb", 3))}
	plan := &resource.ModifyPlanResponse{}
	r.ModifyPlan(context.Background(), resource.ModifyPlanRequest{State: st,
		Plan: tfsdk.Plan{Schema: brandKind.schema, Raw: tftypes.NewValue(st.Raw.Type(), nil)}}, plan)
	del := &resource.DeleteResponse{State: st}
	r.Delete(context.Background(), resource.DeleteRequest{State: st}, del)
	got := []string{}
	for _, d := range append(plan.Diagnostics, del.Diagnostics...) {
		got = append(got, d.Severity().String()+": "+d.Summary())
	}
	want := []string{"Warning: platformapi: this plan only forgets the brand",
		"Warning: platformapi: brand left as it is"}
	if d := cmp.Diff(want, got); d != "" || calls.Load() != 0 {
		t.Fatalf("diagnostics (-want +got):\n%s\nrequests: %d", d, calls.Load())
	}
}

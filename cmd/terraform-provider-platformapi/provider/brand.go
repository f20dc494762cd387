package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// brandID is the id of the one brand of an installation (state and import).
const brandID = "brand"

// brandAssetMembers are the brand's nullable writable members.
var brandAssetMembers = []string{"logo_asset_id", "favicon_asset_id"}

// brandKind is platformapi_brand: the installation's one brand, replaced
// with PUT /brand. Create adopts the existing brand and puts the
// configured members; an update puts every writable member with If-Match
// = the version in state, so a brand changed outside Terraform since the
// last refresh is never overwritten unseen (412, a diagnostic). Nothing
// destroys a brand: removing the resource forgets it and leaves the brand
// as it is, so it is not a destroy under allow_destroy.
var brandKind = &kind{
	name: "brand", noun: "brand", label: "id", singleton: brandID,
	schema: schema.Schema{
		Description: "The installation's brand (one per installation; import id \"brand\"). Creating the " +
			"resource adopts the brand and replaces its writable members with the configuration; removing " +
			"the resource leaves the brand as it is.",
		Attributes: map[string]schema.Attribute{
			"id": stable("Always \"brand\"."),
			"brand_color": schema.StringAttribute{Required: true,
				Description: "# and six hexadecimal digits; the API stores it lower-case, and a value " +
					"differing only in case is no change.",
				Validators:    []validator.String{colorValidator{}},
				PlanModifiers: []planmodifier.String{sameCase{}}},
			"logo_asset_id": optional("A brand asset of kind logo (uploaded at /brand/assets); " +
				"leaving it out clears it (the built-in logo)."),
			"favicon_asset_id": optional("A brand asset of kind favicon; leaving it out clears it " +
				"(the built-in favicon)."),
			"first_party": schema.BoolAttribute{Computed: true,
				Description:   "Set by the platform, never by a request: selects the attribution line.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}},
			"attribution": stable("The line under the product name, computed from first_party."),
			"version": schema.Int64Attribute{Computed: true,
				Description: "Grows by one with every change; sent as If-Match with every update."},
			"updated_at": computed("When the brand last changed (RFC 3339)."),
		},
	},
	createType: platformclient.BrandPut{},
	equivalent: map[string]func(a, b string) bool{"brand_color": strings.EqualFold},
	removeWarning: "Removing platformapi_brand only forgets it: the brand stays as it is (a brand " +
		"cannot be destroyed). To go back to the default look, configure brand_color = \"#2563eb\" " +
		"without asset ids before removing it.",
	create: func(ctx context.Context, c *Client, body record, _ string) (record, bool, error) {
		for _, name := range brandAssetMembers {
			if _, ok := body[name]; !ok {
				body[name] = nil // a PUT replaces: a member left out clears it
			}
		}
		rec, err := putBrand(ctx, c, body, nil)
		return rec, false, err
	},
	read: func(ctx context.Context, c *Client, _ string) (record, error) {
		res, err := c.api.GetBrandWithResponse(ctx, &platformclient.GetBrandParams{}) // no If-None-Match: the body
		if err != nil {
			return nil, err
		}
		return brandRecord(recordOf(res.HTTPResponse, res.Body, res.JSON200))
	},
	update: func(ctx context.Context, c *Client, _ string, _ record, ch change) (record, error) {
		body := record{"brand_color": toJSON(ch.plan["brand_color"])}
		for _, name := range brandAssetMembers {
			body[name] = toJSON(ch.plan[name])
		}
		var ifMatch *string
		if v := ch.state["version"]; v.IsKnown() && !v.IsNull() {
			tag := fmt.Sprintf("%q", fmt.Sprint(toJSON(v)))
			ifMatch = &tag
		}
		return putBrand(ctx, c, body, ifMatch)
	},
}

// putBrand replaces the brand's writable members with body; with ifMatch
// only while the brand is still at that version (else 412).
func putBrand(ctx context.Context, c *Client, body record, ifMatch *string) (record, error) {
	in, err := typed[platformclient.BrandPut](body)
	if err != nil {
		return nil, err
	}
	res, err := c.api.ReplaceBrandWithResponse(ctx, &platformclient.ReplaceBrandParams{IfMatch: ifMatch}, in)
	if err != nil {
		return nil, err
	}
	return brandRecord(recordOf(res.HTTPResponse, res.Body, res.JSON200))
}

// brandRecord names the brand by its fixed id.
func brandRecord(rec record, err error) (record, error) {
	if err == nil {
		rec["id"] = brandID
	}
	return rec, err
}

// colorValidator checks brand_color's form at plan time (the API's
// pattern, either case).
type colorValidator struct{}

// Description says what the validator accepts.
func (colorValidator) Description(context.Context) string {
	return "# and six hexadecimal digits, e.g. #2563eb"
}

// MarkdownDescription is Description.
func (v colorValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

// ValidateString refuses a known value that is not # and six hex digits.
func (v colorValidator) ValidateString(ctx context.Context, req validator.StringRequest,
	resp *validator.StringResponse) {
	s := req.ConfigValue
	if s.IsNull() || s.IsUnknown() || isColor(s.ValueString()) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "platformapi: invalid brand_color",
		fmt.Sprintf("brand_color %q is not %s.", s.ValueString(), v.Description(ctx)))
}

func isColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, r := range s[1:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// sameCase plans the value in state when the configured one differs from
// it only in letter case (the API stores colours lower-case), so an
// upper-case colour in the configuration never shows a change, even
// after an import.
type sameCase struct{}

// Description says what the modifier does.
func (sameCase) Description(context.Context) string {
	return "a value differing from the state only in letter case is no change"
}

// MarkdownDescription is Description.
func (m sameCase) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

// PlanModifyString keeps the state's spelling of an equal-but-for-case value.
func (sameCase) PlanModifyString(_ context.Context, req planmodifier.StringRequest,
	resp *planmodifier.StringResponse) {
	st, cfg := req.StateValue, req.ConfigValue
	if st.IsNull() || st.IsUnknown() || cfg.IsNull() || cfg.IsUnknown() {
		return
	}
	if strings.EqualFold(st.ValueString(), cfg.ValueString()) {
		resp.PlanValue = st
	}
}

package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// tenantKind is platformapi_tenant. Destroy deletes the tenant (only an
// empty one; the API refuses the primary tenant of a live customer); slug
// and customer_id replace it, since a deleted tenant is gone for good.
var tenantKind = &kind{
	name: "tenant", noun: "tenant", verb: "delete", label: "slug",
	schema: schema.Schema{
		Description: "A tenant of a customer. Destroy deletes it (only when empty; needs allow_destroy). " +
			"A change of slug or customer_id replaces it.",
		Attributes: timestamps(map[string]schema.Attribute{
			"id":          idAttr(),
			"customer_id": required("The customer it belongs to; a change replaces the tenant."),
			"slug": required("^[a-z][a-z0-9-]{1,29}$, unique, never a customer's vcs_group; " +
				"a change replaces the tenant."),
			"name": required("Display name."),
			"primary": schema.BoolAttribute{Computed: true, Description: "The customer's primary tenant.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}},
		}),
	},
	createType: platformclient.TenantCreate{},
	patchType:  platformclient.TenantPatch{},
	replace:    []string{"customer_id", "slug"},
	create: func(ctx context.Context, c *Client, body record, key string) (record, bool, error) {
		in, err := typed[platformclient.TenantCreate](body)
		if err != nil {
			return nil, false, err
		}
		res, err := c.api.CreateTenantWithResponse(ctx, &platformclient.CreateTenantParams{IdempotencyKey: &key}, in)
		if err != nil {
			return nil, false, err
		}
		rec, err := recordOf(res.HTTPResponse, res.Body, res.JSON201)
		return rec, replayed(res.HTTPResponse), err
	},
	read: func(ctx context.Context, c *Client, id string) (record, error) {
		res, err := c.api.GetTenantWithResponse(ctx, id)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	update: func(ctx context.Context, c *Client, id string, patch record, _ change) (record, error) {
		in, err := typed[platformclient.TenantPatch](patch)
		if err != nil {
			return nil, err
		}
		res, err := c.api.PatchTenantWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, id, in)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	remove: func(ctx context.Context, c *Client, id string) error {
		res, err := c.api.DeleteTenantWithResponse(ctx, id)
		if err != nil {
			return err
		}
		return noContent(res.HTTPResponse, res.Body, nil)
	},
}

package provider

import (
	"context"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// customerKind is platformapi_customer. Destroy archives (final); the
// identity members are frozen: a change is a plan-time error, never a
// replacement (an archived customer keeps its index, short name and group).
var customerKind = &kind{
	name: "customer", noun: "customer", verb: "archive", label: "short_name",
	schema: schema.Schema{
		Description: "A customer with its primary tenant and code-host group. Destroy archives it " +
			"(final; needs allow_destroy). short_name, vcs_group, customer_index and edition are frozen.",
		Attributes: timestamps(map[string]schema.Attribute{
			"id":                    idAttr(),
			"short_name":            required("^[A-Z][A-Z0-9]{1,15}$; frozen."),
			"long_name":             required("3 to 80 characters."),
			"vcs_group":             required("Code-host group and primary tenant slug, ^[a-z][a-z0-9-]{1,29}$; frozen."),
			"primary_contact_email": required("Stored normalised (domain lower-cased)."),
			"primary_contact_name":  required("2 to 80 characters."),
			"billing_tier": defaulted("INTERNAL (on create by default) or PAYING; " +
				"left out, it stays as it is."),
			"customer_index": schema.Int64Attribute{Optional: true, Computed: true,
				Description:   "1 to 999; allocated by the server when left out; frozen.",
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
			"default_email_tier": schema.Int64Attribute{Optional: true, Computed: true,
				Description:   "1, 2 or 3 (3 on create by default); left out, it stays as it is.",
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
			"edition": defaulted("sp (default) or enterprise; frozen."),
			"notes":   optional("Up to 2000 characters; leaving it out clears it."),
			"status":  defaulted("active (on create by default) or suspended; left out, it stays as it is."),
		}),
	},
	createType: platformclient.CustomerCreate{},
	patchType:  platformclient.CustomerPatch{},
	frozen:     []string{"short_name", "vcs_group", "customer_index", "edition"},
	equivalent: map[string]func(a, b string) bool{"primary_contact_email": sameEmail},
	gone:       func(r record) bool { return r["status"] == "archived" },
	create: func(ctx context.Context, c *Client, body record, key string) (record, bool, error) {
		in, err := typed[platformclient.CustomerCreate](body)
		if err != nil {
			return nil, false, err
		}
		res, err := c.api.CreateCustomerWithResponse(ctx, &platformclient.CreateCustomerParams{IdempotencyKey: &key}, in)
		if err != nil {
			return nil, false, err
		}
		rec, err := recordOf(res.HTTPResponse, res.Body, res.JSON201)
		return rec, replayed(res.HTTPResponse), err
	},
	read: readCustomer,
	update: func(ctx context.Context, c *Client, id string, patch record, _ change) (record, error) {
		in, err := typed[platformclient.CustomerPatch](patch)
		if err != nil {
			return nil, err
		}
		res, err := c.api.PatchCustomerWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, id, in)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	remove: func(ctx context.Context, c *Client, id string) error {
		res, err := c.api.ArchiveCustomerWithResponse(ctx, id)
		if err != nil {
			return err
		}
		return noContent(res.HTTPResponse, res.Body, nil)
	},
}

func readCustomer(ctx context.Context, c *Client, id string) (record, error) {
	res, err := c.api.GetCustomerWithResponse(ctx, id, &platformclient.GetCustomerParams{})
	if err != nil {
		return nil, err
	}
	return recordOf(res.HTTPResponse, res.Body, res.JSON200)
}

// recordOf is the record of a successful answer v, or the problem.
func recordOf[T any](res *http.Response, body []byte, v *T) (record, error) {
	val, err := answer(res, body, v, nil)
	if err != nil {
		return nil, err
	}
	return toRecord(val)
}

package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// userKind is platformapi_user. Destroy deactivates (people are never
// deleted); email is frozen: a change is a plan-time error, since a
// replacement would deactivate the person and keep them.
var userKind = &kind{
	name: "user", noun: "user", verb: "deactivate", label: "email",
	schema: schema.Schema{
		Description: "A person of the installation (invited; no password anywhere). Destroy deactivates " +
			"(never deletes; needs allow_destroy). email is frozen.",
		Attributes: timestamps(map[string]schema.Attribute{
			"id":           idAttr(),
			"email":        required("Stored normalised; unique regardless of case; frozen."),
			"display_name": required("The person's name."),
			"roles": schema.SetAttribute{ElementType: types.StringType, Optional: true, Computed: true,
				Description: "Role names; each must carry only keys the caller's token holds. Left out, " +
					"the roles stay as they are; [] takes every role away.",
				PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()}},
			"status":         computed("active or deactivated."),
			"deactivated_at": computed("When the person was deactivated; null while active."),
		}),
	},
	createType: platformclient.UserInvite{},
	patchType:  platformclient.UserPatch{},
	frozen:     []string{"email"},
	equivalent: map[string]func(a, b string) bool{"email": sameEmail},
	gone:       func(r record) bool { return r["status"] == "deactivated" },
	create: func(ctx context.Context, c *Client, body record, key string) (record, bool, error) {
		in, err := typed[platformclient.UserInvite](body)
		if err != nil {
			return nil, false, err
		}
		res, err := c.api.InviteUserWithResponse(ctx, &platformclient.InviteUserParams{IdempotencyKey: &key}, in)
		if err != nil {
			return nil, false, err
		}
		rec, err := recordOf(res.HTTPResponse, res.Body, res.JSON201)
		return rec, replayed(res.HTTPResponse), err
	},
	read: func(ctx context.Context, c *Client, id string) (record, error) {
		res, err := c.api.GetUserWithResponse(ctx, id)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	update: func(ctx context.Context, c *Client, id string, patch record, _ change) (record, error) {
		in, err := typed[platformclient.UserPatch](patch)
		if err != nil {
			return nil, err
		}
		res, err := c.api.PatchUserWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, id, in)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	remove: func(ctx context.Context, c *Client, id string) error {
		res, err := c.api.DeactivateUserWithResponse(ctx, id)
		if err != nil {
			return err
		}
		return noContent(res.HTTPResponse, res.Body, nil)
	},
}

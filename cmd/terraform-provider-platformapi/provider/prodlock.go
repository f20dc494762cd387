package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// prodLockKind is platformapi_prod_lock: the PROD data lock of a project,
// set with PUT (idempotent by nature, so no Idempotency-Key). Releasing a
// lock is a change of locked to false with confirm_unlock (the project's
// short name); removing the resource forgets it and leaves the lock as it
// is, so no plan ever releases a lock unasked.
var prodLockKind = &kind{
	name: "prod_lock", noun: "PROD data lock", label: "project_id",
	schema: schema.Schema{
		Description: "The PROD data lock of a project (while locked, data copies into PROD are refused). " +
			"Removing the resource leaves the lock as it is.",
		Attributes: map[string]schema.Attribute{
			"id":         stable("The project id."),
			"project_id": required("The project; a change moves the resource to another project."),
			"locked": schema.BoolAttribute{Required: true,
				Description: "true sets the lock, false releases it (with confirm_unlock)."},
			"confirm_unlock": optional("To release the lock: the project's short name exactly."),
			"changed_at":     computed("When the lock last changed."),
			"changed_by":     computed("Who changed it last."),
		},
	},
	createType:  platformclient.ProdLockInputBody{},
	pathMembers: []string{"project_id"},
	replace:     []string{"project_id"},
	local:       []string{"confirm_unlock"},
	removeWarning: "Removing platformapi_prod_lock only forgets it: the PROD data lock stays as it is. " +
		"To release it, set locked = false with confirm_unlock = the project's short name.",
	create: func(ctx context.Context, c *Client, body record, _ string) (record, bool, error) {
		rec, err := putProdLock(ctx, c, body)
		return rec, false, err
	},
	read: func(ctx context.Context, c *Client, id string) (record, error) {
		res, err := c.api.GetProdLockWithResponse(ctx, id)
		if err != nil {
			return nil, err
		}
		return withID(recordOf(res.HTTPResponse, res.Body, res.JSON200))
	},
	update: func(ctx context.Context, c *Client, id string, _ record, ch change) (record, error) {
		body := record{"project_id": id, "locked": toJSON(ch.plan["locked"]),
			"confirm_unlock": toJSON(ch.plan["confirm_unlock"])}
		return putProdLock(ctx, c, body)
	},
}

// putProdLock sets the lock of body's project_id to body's locked.
func putProdLock(ctx context.Context, c *Client, body record) (record, error) {
	id, _ := body["project_id"].(string)
	delete(body, "project_id")
	in, err := typed[platformclient.ProdLockInputBody](body)
	if err != nil {
		return nil, err
	}
	res, err := c.api.SetProdLockWithResponse(ctx, id, in)
	if err != nil {
		return nil, err
	}
	return withID(recordOf(res.HTTPResponse, res.Body, res.JSON200))
}

// withID names a prod lock by its project.
func withID(rec record, err error) (record, error) {
	if err == nil {
		rec["id"] = rec["project_id"]
	}
	return rec, err
}

package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// projectKind is platformapi_project. Create answers 202 with the
// provisioning operation and waits on it (timeouts.create, default 10m).
// Destroy retires (the short name and domain stay reserved), so the
// identity members are frozen rather than replaced.
var projectKind = &kind{
	name: "project", noun: "project", verb: "retire", label: "short_name",
	schema: schema.Schema{
		Description: "A project of a customer, provisioned in the background (create waits for it). " +
			"Destroy retires it (needs allow_destroy). short_name, kind, customer_id and tenant_id are frozen.",
		Attributes: timestamps(map[string]schema.Attribute{
			"id":          idAttr(),
			"customer_id": required("The customer; frozen."),
			"tenant_id":   defaulted("Default: the customer's primary tenant; frozen."),
			"short_name":  required("^[A-Z][A-Z0-9]{1,15}$, unique forever; frozen."),
			"name":        required("3 to 80 characters."),
			"kind":        required("cluster or vm; frozen."),
			"components": schema.SetAttribute{ElementType: types.StringType, Required: true,
				Description: "Enabled components: app-api, www."},
			"domain": optional("Unique forever; leaving it out clears it."),
			"status": computed("provisioning, active or retired."),
			"platform": schema.BoolAttribute{Computed: true, Description: "The platform's own project (read-only).",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}},
		}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(context.Background(), timeouts.Opts{Create: true}),
		},
	},
	createType:    platformclient.ProjectCreate{},
	patchType:     platformclient.ProjectPatch{},
	frozen:        []string{"customer_id", "tenant_id", "short_name", "kind"},
	local:         []string{"timeouts"},
	createTimeout: true,
	gone:          func(r record) bool { return r["status"] == "retired" },
	create:        createProject,
	read:          readProject,
	update: func(ctx context.Context, c *Client, id string, patch record, _ change) (record, error) {
		in, err := typed[platformclient.ProjectPatch](patch)
		if err != nil {
			return nil, err
		}
		res, err := c.api.PatchProjectWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, id, in)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	remove: func(ctx context.Context, c *Client, id string) error {
		res, err := c.api.RetireProjectWithResponse(ctx, id)
		if err != nil {
			return err
		}
		return noContent(res.HTTPResponse, res.Body, nil)
	},
}

// createProject books the project and waits until its provisioning
// operation has succeeded. Interrupted by the timeout, apply again: the
// same Idempotency-Key answers with the same operation, and waiting resumes.
func createProject(ctx context.Context, c *Client, body record, key string) (record, bool, error) {
	in, err := typed[platformclient.ProjectCreate](body)
	if err != nil {
		return nil, false, err
	}
	res, err := c.api.CreateProjectWithResponse(ctx, &platformclient.CreateProjectParams{IdempotencyKey: &key}, in)
	if err != nil {
		return nil, false, err
	}
	op, err := answer(res.HTTPResponse, res.Body, res.JSON202, nil)
	if err != nil {
		return nil, false, err
	}
	if op, err = waitOperation(ctx, c, op); err != nil {
		return nil, false, err
	}
	rec, err := readProject(ctx, c, op.Target.Id)
	return rec, replayed(res.HTTPResponse), err
}

func readProject(ctx context.Context, c *Client, id string) (record, error) {
	res, err := c.api.GetProjectWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return recordOf(res.HTTPResponse, res.Body, res.JSON200)
}

// waitOperation polls op until it has succeeded (nil), failed (its error)
// or ctx ends.
func waitOperation(ctx context.Context, c *Client, op *platformclient.Operation) (*platformclient.Operation, error) {
	pause := 100 * time.Millisecond
	for {
		switch op.Status {
		case "succeeded":
			return op, nil
		case "failed":
			e, _ := op.Error.Get()
			return nil, fmt.Errorf("operation %s failed: %s: %s", op.Id, e.Code, e.Detail)
		}
		if err := sleepCtx(ctx, pause); err != nil {
			return nil, fmt.Errorf("operation %s is still %s (%w); apply again to resume waiting: "+
				"the same Idempotency-Key answers with this operation", op.Id, op.Status, err)
		}
		pause = min(2*pause, 2*time.Second)
		res, err := c.api.GetOperationWithResponse(ctx, op.Id)
		if err != nil {
			return nil, err
		}
		if op, err = answer(res.HTTPResponse, res.Body, res.JSON200, nil); err != nil {
			return nil, err
		}
	}
}

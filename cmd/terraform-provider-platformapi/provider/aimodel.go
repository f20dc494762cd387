package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// aiModelMetadata are the catalogue's optional, nullable text members.
var aiModelMetadata = map[string]string{
	"architecture": "dense or moe.", "category": "coding, agentic, reasoning, vision, embedding, rerank, …",
	"context_window": "Human form.", "description": "Longer introduction.",
	"frontier_equiv": "Rough comparison to a hosted frontier model.", "gateway_tier": "AI gateway serving tier.",
	"license": "Model licence as recorded.", "min_target": "Smallest hardware, human form.",
	"model_card_url": "Web address of the model card.", "notes": "Operator notes.",
	"org": "Model-hub organisation.", "params": "Parameters, human form.", "published": "Upstream release.",
	"quant": "Precision or quantisation.", "serving_node": "Where it is meant to be served.",
	"strong_axis": "What it is strongest at.", "summary": "One-line introduction.",
	"vendor": "The lab that built it.", "vendor_country": "The vendor's home country.",
}

// nodeCacheRef is the type of a model's node_caches items.
var nodeCacheRef = types.ObjectType{AttrTypes: map[string]attr.Type{
	"hostname": types.StringType, "path": types.StringType, "size_gb": types.Float64Type,
	"status": types.StringType, "updated_at": types.StringType,
}}

func aiModelAttributes() map[string]schema.Attribute {
	m := map[string]schema.Attribute{
		"id":           idAttr(),
		"repo":         required("Model-hub repo id org/name; unique; a change replaces the row."),
		"display_name": defaulted("On create by default the last part of repo; left out, it stays as it is."),
		"gated": schema.BoolAttribute{Optional: true, Computed: true,
			Description: "The repo needs an access approval before a pull (false on create by default); " +
				"left out, it stays as it is.",
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}},
		"param_count_b": schema.Float64Attribute{Optional: true, Description: "Parameters in billions."},
		"size_gb":       schema.Float64Attribute{Optional: true, Description: "Weights size on disk in GB."},
		"benchmarks": optional("Benchmark name to score, as JSON text (use jsonencode); " +
			"values number or string."),
		"status":         computed("planned, pulling, owned or serving (read-only)."),
		"location":       computed("nas, local, both or null (read-only)."),
		"offline_ready":  schema.BoolAttribute{Computed: true, Description: "A node holds a cached copy."},
		"nas_volume":     computed("Central-store share (read-only)."),
		"nas_path":       computed("Where the central copy is (read-only)."),
		"cluster_recipe": computed("Serving recipe (read-only)."),
		"node_caches": schema.ListAttribute{ElementType: nodeCacheRef, Computed: true,
			Description: "Copies on AI nodes."},
	}
	for name, doc := range aiModelMetadata {
		m[name] = optional(doc + " Leaving it out clears it.")
	}
	return timestamps(m)
}

// aiModelKind is platformapi_ai_model. Destroy deletes the catalogue row
// (only a planned model without weights); repo replaces it, since a
// deleted row is gone for good.
var aiModelKind = &kind{
	name: "ai_model", noun: "AI model", verb: "delete", label: "repo",
	schema: schema.Schema{
		Description: "A row of the AI model catalogue (metadata only; weights are never pulled by the API). " +
			"Destroy deletes it (a planned model without caches; needs allow_destroy); a change of repo replaces it.",
		Attributes: aiModelAttributes(),
	},
	createType: platformclient.AIModelCreate{},
	patchType:  platformclient.AIModelPatch{},
	replace:    []string{"repo"},
	jsonText:   []string{"benchmarks"},
	create: func(ctx context.Context, c *Client, body record, key string) (record, bool, error) {
		in, err := typed[platformclient.AIModelCreate](body)
		if err != nil {
			return nil, false, err
		}
		res, err := c.api.CreateAiModelWithResponse(ctx, &platformclient.CreateAiModelParams{IdempotencyKey: &key}, in)
		if err != nil {
			return nil, false, err
		}
		rec, err := recordOf(res.HTTPResponse, res.Body, res.JSON201)
		return rec, replayed(res.HTTPResponse), err
	},
	read: readAIModel,
	update: func(ctx context.Context, c *Client, id string, patch record, _ change) (record, error) {
		in, err := typed[platformclient.AIModelPatch](patch)
		if err != nil {
			return nil, err
		}
		res, err := c.api.PatchAiModelWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, id, in)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
	remove: func(ctx context.Context, c *Client, id string) error {
		res, err := c.api.DeleteAiModelWithResponse(ctx, id)
		if err != nil {
			return err
		}
		return noContent(res.HTTPResponse, res.Body, nil)
	},
}

func readAIModel(ctx context.Context, c *Client, id string) (record, error) {
	res, err := c.api.GetAiModelWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return recordOf(res.HTTPResponse, res.Body, res.JSON200)
}

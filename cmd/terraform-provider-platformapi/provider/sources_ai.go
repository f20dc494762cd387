package provider

import (
	"context"
	"strings"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

var aiModelsSource = &source{
	name: "ai_models",
	schema: dschema.Schema{Description: "The AI model catalogue (every page), filtered.",
		Attributes: map[string]dschema.Attribute{
			"status": filter("status."), "category": filter("category."), "vendor": filter("vendor."),
			"org": filter("org."), "gateway_tier": filter("gateway_tier."), "serving_node": filter("serving_node."),
			"q":     filter("substring of repo, display_name or summary."),
			"sort":  filter("id (default), param_count_b or size_gb."),
			"order": filter("asc or desc."),
			"gated": dschema.BoolAttribute{Optional: true, Description: "Filter: gated."},
			"items": dschema.ListNestedAttribute{Computed: true, Description: "The models.",
				NestedObject: dschema.NestedAttributeObject{Attributes: readOnly(aiModelAttributes())}},
		}},
	read: func(ctx context.Context, c *Client, cfg attrs) (record, error) {
		p, err := typed[platformclient.ListAiModelsParams](filters(cfg, "items"))
		if err != nil {
			return nil, err
		}
		items := []platformclient.AIModel{} // no match is an empty list, never null
		for {
			limit := pageLimit
			p.Limit = &limit
			res, err := c.api.ListAiModelsWithResponse(ctx, &p)
			if err != nil {
				return nil, err
			}
			page, err := answer(res.HTTPResponse, res.Body, res.JSON200, nil)
			if err != nil {
				return nil, err
			}
			items = append(items, page.Items...)
			if p.Cursor = next(page.NextCursor.Get()); p.Cursor == nil {
				return toRecord(map[string]any{"items": items})
			}
		}
	},
}

func nodeAttributes() map[string]dschema.Attribute {
	num := func(doc string) dschema.Attribute { return dschema.Float64Attribute{Computed: true, Description: doc} }
	flag := func(doc string) dschema.Attribute { return dschema.BoolAttribute{Computed: true, Description: doc} }
	return map[string]dschema.Attribute{
		"hostname": str0("The node's id."), "is_virtual": flag("A GPU VM on a hybrid host."),
		"monitoring_reachable": flag("false: every live field is null."), "gpu_class": str0("GPU class."),
		"mgmt_ip": str0("Management address."), "site": str0("Site."), "specs_summary": str0("CPU, GPUs, memory."),
		"parent_host": str0("Host of a virtual node."),
		"vmid":        dschema.Int64Attribute{Computed: true, Description: "VM id on parent_host."},
		"services": dschema.ListAttribute{Computed: true, ElementType: types.StringType,
			Description: "Other services the node hosts."},
		"cluster": dschema.SingleNestedAttribute{Computed: true, Description: "Live: cluster membership.",
			Attributes: map[string]dschema.Attribute{"name": str0("Cluster."), "role": str0("Role.")}},
		"collector_stale": flag("Live: collector silent over 30 s."), "cpu_util_pct": num("Live."),
		"disk_used_pct": num("Live."), "gpu_temp_max_c": num("Live."), "gpu_util_avg_pct": num("Live."),
		"gpu_count": dschema.Int64Attribute{Computed: true, Description: "Live: GPUs reporting."},
		"load1":     num("Live."), "mem_used_pct": num("Live."), "online": flag("Live."), "role": str0("Live."),
		"models": dschema.ListNestedAttribute{Computed: true, Description: "Live: loaded models.",
			NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
				"model": str0("Model."), "repo": str0("Repo."), "state": str0("State."),
				"vram_bytes": num("VRAM used.")}}},
		"status":          str0("Live: serving, loaded_idle, idle, offline, standby, powered_off."),
		"throttle_active": flag("Live."), "uptime_seconds": num("Live."),
		"vram_total_bytes": num("Live."), "vram_used_bytes": num("Live."),
	}
}

var aiNodesSource = &source{
	name: "ai_nodes",
	schema: dschema.Schema{Description: "The AI nodes (every page) with live monitoring.",
		Attributes: map[string]dschema.Attribute{
			"site": filter("site."), "gpu_class": filter("gpu_class."),
			"status": filter("live status (serving, loaded_idle, idle, offline, standby, powered_off); " +
				"several, comma-separated, match any."),
			"monitoring_reachable": dschema.BoolAttribute{Computed: true,
				Description: "false: every live field is null."},
			"items": dschema.ListNestedAttribute{Computed: true, Description: "The nodes.",
				NestedObject: dschema.NestedAttributeObject{Attributes: nodeAttributes()}},
		}},
	read: func(ctx context.Context, c *Client, cfg attrs) (record, error) {
		q := filters(cfg, "items", "monitoring_reachable")
		if s, ok := q["status"].(string); ok {
			q["status"] = anyOf(s) // the API's status filter is a list
		}
		p, err := typed[platformclient.ListAiNodesParams](q)
		if err != nil {
			return nil, err
		}
		items, reachable := []platformclient.AINode{}, true
		for {
			limit := pageLimit
			p.Limit = &limit
			res, err := c.api.ListAiNodesWithResponse(ctx, &p)
			if err != nil {
				return nil, err
			}
			page, err := answer(res.HTTPResponse, res.Body, res.JSON200, nil)
			if err != nil {
				return nil, err
			}
			items, reachable = append(items, page.Items...), reachable && page.MonitoringReachable
			if p.Cursor = next(page.NextCursor.Get()); p.Cursor == nil {
				return toRecord(map[string]any{"items": items, "monitoring_reachable": reachable})
			}
		}
	},
}

// filters are the configured, non-null attributes other than outputs, as
// query parameters of the same names.
func filters(cfg attrs, outputs ...string) record {
	out := record{}
outer:
	for name, v := range cfg {
		for _, o := range outputs {
			if o == name {
				continue outer
			}
		}
		if v.IsKnown() && !v.IsNull() {
			out[name] = toJSON(v)
		}
	}
	return out
}

// anyOf is a comma-separated filter value as the list of its values.
func anyOf(s string) []string {
	out := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// next is the cursor of the next page, or nil.
func next(cursor string, err error) *string {
	if err != nil || cursor == "" {
		return nil
	}
	return &cursor
}

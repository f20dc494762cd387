package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// source describes one data source to sourceOf, the one implementation
// every data source shares: read the record, store it by attribute name;
// input attributes (filters) keep their configured values.
type source struct {
	name   string
	schema dschema.Schema
	read   func(ctx context.Context, c *Client, cfg attrs) (record, error)
}

type genericSource struct {
	s *source
	c *Client
}

var _ datasource.DataSourceWithConfigure = (*genericSource)(nil)

func sourceOf(s *source) func() datasource.DataSource {
	return func() datasource.DataSource { return &genericSource{s: s} }
}

// Metadata names the type platformapi_<name>.
func (d *genericSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.s.name
}

// Schema is the source's schema.
func (d *genericSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = d.s.schema
}

// Configure takes the provider's client.
func (d *genericSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*Client); ok {
		d.c = c
	}
}

// Read reads the record and stores it.
func (d *genericSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.c == nil {
		resp.Diagnostics.AddError("platformapi: provider not configured", "base_url and token must be known.")
		return
	}
	cfg := objectAttrs(req.Config.Raw)
	rec, err := d.s.read(ctx, d.c, cfg)
	if err != nil {
		addError(&resp.Diagnostics, "read "+d.s.name, err, nil)
		return
	}
	keep := attrs{}
	for name, a := range d.s.schema.Attributes {
		if a.IsOptional() || a.IsRequired() {
			keep[name] = cfg[name]
		}
	}
	t := d.s.schema.Type().TerraformType(ctx).(tftypes.Object)
	v, err := objectFromJSON(t, rec, keep)
	if err != nil {
		resp.Diagnostics.AddError("platformapi: unexpected answer for "+d.s.name, err.Error())
		return
	}
	resp.State.Raw = v
}

// readOnly turns resource attributes into computed data source attributes
// of the same names and types, so a data source reads what the resource
// manages.
func readOnly(in map[string]rschema.Attribute) map[string]dschema.Attribute {
	out := map[string]dschema.Attribute{}
	for name, a := range in {
		out[name] = readOnlyAttr(a)
	}
	return out
}

func readOnlyAttr(a rschema.Attribute) dschema.Attribute {
	doc := a.GetDescription()
	switch a := a.(type) {
	case rschema.StringAttribute:
		return dschema.StringAttribute{Computed: true, Description: doc, Sensitive: a.Sensitive}
	case rschema.BoolAttribute:
		return dschema.BoolAttribute{Computed: true, Description: doc}
	case rschema.Int64Attribute:
		return dschema.Int64Attribute{Computed: true, Description: doc}
	case rschema.Float64Attribute:
		return dschema.Float64Attribute{Computed: true, Description: doc}
	case rschema.SetAttribute:
		return dschema.SetAttribute{Computed: true, Description: doc, ElementType: a.ElementType}
	case rschema.ListAttribute:
		return dschema.ListAttribute{Computed: true, Description: doc, ElementType: a.ElementType}
	}
	panic(fmt.Sprintf("readOnly: unhandled attribute %T", a))
}

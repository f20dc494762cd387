// Package provider is the platformapi Terraform provider: resources and
// data sources over the client generated from the server's own OpenAPI
// document, with the plan-time destroy switch (allow_destroy).
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Address is the provider's source address for local use.
const Address = "registry.terraform.io/platform/platformapi"

// Environment variables read when the provider block leaves an argument out.
const (
	EnvBaseURL = "PLATFORMAPI_BASE_URL"
	EnvToken   = "PLATFORMAPI_TOKEN"
)

// Provider is platformapi at one version.
type Provider struct{ version string }

// New returns the provider factory for version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &Provider{version: version} }
}

type config struct {
	BaseURL      types.String `tfsdk:"base_url"`
	Token        types.String `tfsdk:"token"`
	AllowDestroy types.Bool   `tfsdk:"allow_destroy"`
}

// Metadata names the provider platformapi.
func (p *Provider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "platformapi"
	resp.Version = p.version
}

// Schema is the provider block.
func (p *Provider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages one platform installation through its management API (/api/v1).",
		Attributes: map[string]schema.Attribute{
			"base_url": schema.StringAttribute{Optional: true,
				Description: "The installation's portal address, e.g. https://portal.example.internal " +
					"(the API is at base_url/api/v1). Default: $" + EnvBaseURL + "."},
			"token": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "An API token (svc_pat_… or svc_sat_…). Default: $" + EnvToken + "."},
			"allow_destroy": schema.BoolAttribute{Optional: true,
				Description: "Allow plans that archive, delete, deactivate, retire or revoke (destroy or " +
					"replace). Default false: such a plan fails at plan time. The token needs Allow destroy too."},
		},
	}
}

// Configure builds the client from the block and the environment.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg config
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.BaseURL.IsUnknown() || cfg.Token.IsUnknown() {
		return
	}
	base, token := orEnv(cfg.BaseURL, EnvBaseURL), orEnv(cfg.Token, EnvToken)
	if base == "" {
		resp.Diagnostics.AddAttributeError(path.Root("base_url"), "platformapi: base_url missing",
			"Set base_url in the provider block or "+EnvBaseURL+".")
	}
	if token == "" {
		resp.Diagnostics.AddAttributeError(path.Root("token"), "platformapi: token missing",
			"Set token in the provider block or "+EnvToken+".")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	c, err := NewClient(base, token, "terraform-provider-platformapi/"+p.version, cfg.AllowDestroy.ValueBool())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("base_url"), "platformapi: invalid base_url", err.Error())
		return
	}
	resp.ResourceData, resp.DataSourceData = c, c
}

func orEnv(v types.String, env string) string {
	if s := v.ValueString(); s != "" {
		return s
	}
	return os.Getenv(env)
}

// Resources are the managed resource types.
func (p *Provider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		resourceOf(customerKind),
		resourceOf(tenantKind),
		resourceOf(userKind),
		resourceOf(projectKind),
		resourceOf(aiModelKind),
		resourceOf(prodLockKind),
		resourceOf(gatewayKeyKind),
		resourceOf(brandKind),
	}
}

// DataSources are the data source types.
func (p *Provider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		sourceOf(whoamiSource),
		sourceOf(metaSource),
		sourceOf(customerSource),
		sourceOf(aiModelsSource),
		sourceOf(aiNodesSource),
		sourceOf(gatewaySource),
	}
}

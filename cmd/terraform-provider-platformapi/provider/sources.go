package provider

import (
	"context"
	"errors"
	"fmt"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// pageLimit is the page size the list data sources read with.
const pageLimit int64 = 200

func str0(doc string) dschema.StringAttribute {
	return dschema.StringAttribute{Computed: true, Description: doc}
}

func filter(doc string) dschema.StringAttribute {
	return dschema.StringAttribute{Optional: true, Description: "Filter: " + doc}
}

var whoamiSource = &source{
	name: "whoami",
	schema: dschema.Schema{Description: "The calling principal, its effective scopes and its token.",
		Attributes: map[string]dschema.Attribute{
			"auth_kind": str0("pat or service_account."),
			"principal": dschema.SingleNestedAttribute{Computed: true, Description: "Who is calling.",
				Attributes: map[string]dschema.Attribute{"kind": str0("user or service_account."), "id": str0("Id."),
					"email": str0("A person's e-mail address."), "name": str0("Display or account name.")}},
			"scopes": dschema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "Effective scopes, sorted."},
			"token": dschema.SingleNestedAttribute{Computed: true, Description: "The token in use.",
				Attributes: map[string]dschema.Attribute{"id": str0("Id."), "name": str0("Name."),
					"expires_at": str0("Expiry."), "expiry_warning": str0("14d or 3d before expiry, else null."),
					"allow_destroy": dschema.BoolAttribute{Computed: true, Description: "Allow destroy."}}},
		}},
	read: func(ctx context.Context, c *Client, _ attrs) (record, error) {
		res, err := c.api.GetWhoamiWithResponse(ctx)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
}

var metaSource = &source{
	name: "meta",
	schema: dschema.Schema{Description: "Versions of the API and the platform.",
		Attributes: map[string]dschema.Attribute{"api_version": str0("Semantic API version."),
			"platform_version": str0("Platform release.")}},
	read: func(ctx context.Context, c *Client, _ attrs) (record, error) {
		res, err := c.api.GetMetaWithResponse(ctx)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
}

var gatewaySource = &source{
	name: "ai_gateway",
	schema: dschema.Schema{Description: "The AI gateway's base URL and serving tiers.",
		Attributes: map[string]dschema.Attribute{"base_url": str0("OpenAI-compatible base URL, ending in /v1."),
			"tiers": dschema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "Serving tiers of the catalogue, sorted."}}},
	read: func(ctx context.Context, c *Client, _ attrs) (record, error) {
		res, err := c.api.GetAiGatewayWithResponse(ctx)
		if err != nil {
			return nil, err
		}
		return recordOf(res.HTTPResponse, res.Body, res.JSON200)
	},
}

func customerSourceSchema() dschema.Schema {
	a := readOnly(customerKind.schema.Attributes)
	a["id"] = dschema.StringAttribute{Optional: true, Computed: true,
		Description: "Look up by id (or by short_name, not both)."}
	a["short_name"] = dschema.StringAttribute{Optional: true, Computed: true,
		Description: "Or by short name (not with id)."}
	return dschema.Schema{Description: "One customer, by id or short_name (archived ones included).", Attributes: a}
}

var customerSource = &source{
	name:   "customer",
	schema: customerSourceSchema(),
	read: func(ctx context.Context, c *Client, cfg attrs) (record, error) {
		id, short := str(cfg["id"]), str(cfg["short_name"])
		if id != "" && short != "" {
			return nil, errors.New("set id or short_name, not both")
		}
		if id != "" {
			return readCustomer(ctx, c, id)
		}
		if short == "" {
			return nil, errors.New("set id or short_name")
		}
		res, err := c.api.ListCustomersWithResponse(ctx, &platformclient.ListCustomersParams{ShortName: &short})
		if err != nil {
			return nil, err
		}
		page, err := answer(res.HTTPResponse, res.Body, res.JSON200, nil)
		if err != nil {
			return nil, err
		}
		if len(page.Items) != 1 {
			return nil, fmt.Errorf("no customer has short_name %q", short)
		}
		return toRecord(page.Items[0])
	},
}

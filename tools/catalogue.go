package tools

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/resources"
)

// Resource URIs of the catalogues the MCP endpoint serves.
const (
	// ContractURI is the OpenAPI 3.1 document of the running API, the same
	// as GET /api/v1/openapi.json.
	ContractURI = "platformapi://contract/openapi.json"
	// PermissionsURI is the permission catalogue, the items of
	// GET /api/v1/permissions.
	PermissionsURI = "platformapi://catalogue/permissions"
)

// addCatalogues registers the read-only resources. Reading one needs the
// transport's valid token but no permission, and costs no rate-limit units:
// both are static for the running binary.
func (m *MCP) addCatalogues() {
	m.mcp.AddResource(mcp.NewResource(ContractURI, "OpenAPI contract",
		mcp.WithResourceDescription("The OpenAPI 3.1 document of this installation's API: every operation, "+
			"parameter, schema and problem answer."),
		mcp.WithMIMEType("application/json"),
	), m.jsonResource(ContractURI, func() any { return m.srv.API().OpenAPI() }))
	m.mcp.AddResource(mcp.NewResource(PermissionsURI, "Permission catalogue",
		mcp.WithResourceDescription("Every permission key, what it allows and whether it can be put on an API token."),
		mcp.WithMIMEType("application/json"),
	), m.jsonResource(PermissionsURI, permissionItems))
}

// jsonResource answers a resource read with the JSON of value().
func (m *MCP) jsonResource(uri string, value func() any) func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		b, err := json.Marshal(value())
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
	}
}

// permissionItems is the catalogue in the shape GET /permissions answers.
func permissionItems() any {
	ps := resources.Permissions()
	out := make([]api.PermissionItem, len(ps))
	for i, p := range ps {
		out[i] = api.PermissionItem{Key: p.Key, Description: p.Description, TokenAllowed: p.TokenAllowed}
	}
	return out
}

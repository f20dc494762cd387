package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/api/schemawalk"
	"platformapi/resources"
)

// Resource URIs of the catalogues the MCP endpoint serves.
const (
	// ContractURI is the OpenAPI 3.1 document of the running API, the same
	// as GET /api/v1/openapi.json.
	ContractURI = "platformapi://contract/openapi.json"
	// ContractPartURIPrefix starts the URI of each per-tag part of the
	// contract: the prefix, the tag's slug (lower case, spaces as '-'),
	// ".json"; for example platformapi://contract/openapi/ai.json.
	ContractPartURIPrefix = "platformapi://contract/openapi/"
	// PermissionsURI is the permission catalogue, the items of
	// GET /api/v1/permissions.
	PermissionsURI = "platformapi://catalogue/permissions"
	// ProblemsURI is the problem-code catalogue (resources.Problems).
	ProblemsURI = "platformapi://catalogue/problems"
)

// addCatalogues registers the read-only resources: the contract, its
// per-tag parts, the permission and problem-code catalogues. Reading one
// needs the transport's valid token but no permission: each is static for
// the running binary (computed once here).
func (m *MCP) addCatalogues() error {
	doc, err := json.Marshal(m.srv.API().OpenAPI())
	if err != nil {
		return err
	}
	m.addJSON(ContractURI, "OpenAPI contract", "The OpenAPI 3.1 document of this installation's API: every "+
		"operation, parameter, schema and problem answer. Its per-tag parts are smaller.", doc)
	parts, err := contractParts(doc)
	if err != nil {
		return err
	}
	for _, p := range parts {
		m.addJSON(ContractPartURIPrefix+p.slug+".json", "OpenAPI contract: "+p.tag,
			"The operations tagged "+p.tag+" with the schemas they use: a part of the contract small enough "+
				"to read whole.", p.doc)
	}
	perms, err := json.Marshal(permissionItems())
	if err != nil {
		return err
	}
	m.addJSON(PermissionsURI, "Permission catalogue",
		"Every permission key, what it allows and whether it can be put on an API token.", perms)
	problems, err := json.Marshal(api.ProblemCatalogue())
	if err != nil {
		return err
	}
	m.addJSON(ProblemsURI, "Problem-code catalogue", "Every code the server can answer (problems, warnings, "+
		"operation errors): its HTTP status, what it means, whether a retry can help and the tool to call next.",
		problems)
	return nil
}

// addJSON registers one static JSON resource.
func (m *MCP) addJSON(uri, name, desc string, body []byte) {
	text := string(body)
	m.mcp.AddResource(mcp.NewResource(uri, name, mcp.WithResourceDescription(desc),
		mcp.WithMIMEType("application/json")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: text}}, nil
		})
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

// contractPart is the contract cut down to one tag.
type contractPart struct {
	tag, slug string
	doc       []byte
}

// contractParts splits the OpenAPI document (JSON) by tag: each part keeps
// the document's info, servers and security schemes, the operations of its
// tag and the component schemas they reference (transitively).
func contractParts(doc []byte) ([]contractPart, error) {
	var full map[string]any
	if err := json.Unmarshal(doc, &full); err != nil {
		return nil, err
	}
	tags, _ := full["tags"].([]any)
	var out []contractPart
	for _, t := range tags {
		tm, _ := t.(map[string]any)
		name, _ := tm["name"].(string)
		part, err := contractPartFor(full, tm, name)
		if err != nil {
			return nil, fmt.Errorf("contract part %s: %w", name, err)
		}
		out = append(out, contractPart{tag: name, slug: strings.ReplaceAll(strings.ToLower(name), " ", "-"), doc: part})
	}
	return out, nil
}

func contractPartFor(full, tag map[string]any, name string) ([]byte, error) {
	paths := map[string]any{}
	for path, item := range full["paths"].(map[string]any) {
		ops := map[string]any{}
		for method, op := range item.(map[string]any) {
			om, _ := op.(map[string]any)
			if tags, _ := om["tags"].([]any); slices.Contains(tags, any(name)) {
				ops[method] = op
			}
		}
		if len(ops) > 0 {
			paths[path] = ops
		}
	}
	comps, _ := full["components"].(map[string]any)
	all, _ := comps["schemas"].(map[string]any)
	schemas := map[string]any{}
	reached, _ := schemawalk.Reachable(paths, all)
	for name := range reached {
		schemas[name] = all[name]
	}
	part := map[string]any{"openapi": full["openapi"], "info": full["info"], "servers": full["servers"],
		"tags": []any{tag}, "paths": paths,
		"components": map[string]any{"schemas": schemas, "securitySchemes": comps["securitySchemes"]}}
	return json.Marshal(part)
}

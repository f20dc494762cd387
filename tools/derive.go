package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/mark3labs/mcp-go/mcp"
)

// toolSpec is one derived tool and what its handler needs to rebuild the
// REST request: the path template (relative to api.Prefix) and the
// parameters that become arguments.
type toolSpec struct {
	tool   mcp.Tool
	path   string
	params []param
}

// param is one path or query parameter of an operation.
type param struct {
	name     string
	in       string // "path" or "query"
	explode  bool   // arrays as repeated keys instead of comma-separated
	required bool
}

// deriveTools turns every documented, non-hidden GET operation of doc into a
// tool, sorted by name. Only the GET member of a path item is ever read, so
// no write operation can become a tool. It fails on a missing, malformed or
// duplicate operation id.
func deriveTools(doc *huma.OpenAPI) ([]toolSpec, error) {
	var specs []toolSpec
	seen := map[string]bool{}
	for path, item := range doc.Paths {
		op := item.Get
		if op == nil || op.Hidden {
			continue
		}
		if !validToolName(op.OperationID) {
			return nil, fmt.Errorf("tools: GET %s: operation id %q is not a valid tool name", path, op.OperationID)
		}
		if seen[op.OperationID] {
			return nil, fmt.Errorf("tools: GET %s: duplicate operation id %q", path, op.OperationID)
		}
		seen[op.OperationID] = true
		spec, err := specFor(doc, path, op)
		if err != nil {
			return nil, fmt.Errorf("tools: %s: %w", op.OperationID, err)
		}
		specs = append(specs, spec)
	}
	slices.SortFunc(specs, func(a, b toolSpec) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	return specs, nil
}

// validToolName reports whether name is what MCP allows as a tool name:
// 1 to 128 of letters, digits, '_', '-', '.'.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.", r)
		if !ok {
			return false
		}
	}
	return true
}

// specFor builds the tool of one GET operation.
func specFor(doc *huma.OpenAPI, path string, op *huma.Operation) (toolSpec, error) {
	spec := toolSpec{path: path}
	props := map[string]any{}
	required := []string{}
	for _, p := range op.Parameters {
		if p.In != "path" && p.In != "query" {
			continue // headers and cookies are not tool arguments
		}
		schema, err := paramSchema(doc, p)
		if err != nil {
			return spec, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		props[p.Name] = schema
		req := p.In == "path" || p.Required
		if req {
			required = append(required, p.Name)
		}
		spec.params = append(spec.params, param{name: p.Name, in: p.In, required: req,
			explode: p.Explode != nil && *p.Explode})
	}
	raw, err := json.Marshal(map[string]any{
		"type": "object", "properties": props, "required": required, "additionalProperties": false,
	})
	if err != nil {
		return spec, err
	}
	spec.tool = newTool(op, raw)
	return spec, nil
}

// newTool builds the MCP tool with explicit annotations. It must use
// NewToolWithRawSchema: mcp.NewTool plus WithRawInputSchema sets both
// schemas and then fails to marshal.
func newTool(op *huma.Operation, schema json.RawMessage) mcp.Tool {
	desc := op.Summary
	if op.Description != "" {
		if desc != "" {
			desc += "\n\n"
		}
		desc += op.Description
	}
	t := mcp.NewToolWithRawSchema(op.OperationID, desc, schema)
	t.Title = op.Summary
	t.Annotations = mcp.ToolAnnotation{
		Title:           op.Summary,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	return t
}

// paramSchema renders a parameter's JSON Schema (OpenAPI 3.1 dialect) with
// every component reference inlined, and the parameter's description.
func paramSchema(doc *huma.OpenAPI, p *huma.Param) (map[string]any, error) {
	var m map[string]any
	if err := remarshal(p.Schema, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	v, err := inlineRefs(doc, m, nil)
	if err != nil {
		return nil, err
	}
	m, _ = v.(map[string]any)
	if p.Description != "" {
		m["description"] = p.Description
	}
	return m, nil
}

// inlineRefs replaces every {"$ref": "#/components/schemas/X"} inside v by
// the referenced schema, so the tool's input schema stands alone. stack
// holds the references being expanded, to refuse a recursive schema.
func inlineRefs(doc *huma.OpenAPI, v any, stack []string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			return inlineRef(doc, ref, stack)
		}
		for k, e := range x {
			r, err := inlineRefs(doc, e, stack)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	case []any:
		for i, e := range x {
			r, err := inlineRefs(doc, e, stack)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	}
	return v, nil
}

// inlineRef resolves one component reference, recursively inlined.
func inlineRef(doc *huma.OpenAPI, ref string, stack []string) (any, error) {
	if slices.Contains(stack, ref) {
		return nil, fmt.Errorf("recursive schema %s cannot be a tool argument", ref)
	}
	var target *huma.Schema
	if doc.Components != nil && doc.Components.Schemas != nil {
		target = doc.Components.Schemas.SchemaFromRef(ref)
	}
	if target == nil {
		return nil, fmt.Errorf("unresolvable schema reference %s", ref)
	}
	var m map[string]any
	if err := remarshal(target, &m); err != nil {
		return nil, err
	}
	return inlineRefs(doc, m, append(stack, ref))
}

// remarshal converts v to a generic JSON value through its JSON encoding.
func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

package tools

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/api/schemawalk"
)

// toolSpec is one derived tool and what its handler needs to rebuild the
// REST request: the path template (relative to api.Prefix) and the
// parameters that become arguments; and what tools/list filters on: its
// toolset and the permission keys of which any one lets a token call it.
type toolSpec struct {
	tool        mcp.Tool
	path        string
	params      []param
	toolset     string
	permissions []string
	list        bool                      // takes fields (and limit): a page of items
	inputProps  map[string]map[string]any // the input schema's properties, for error hints
	rootDef     string                    // the component name of the 200 answer's schema
	itemKey     []string                  // a list's item key (api.ExtItemKey)
	listers     map[string]string         // required argument → the list tool of its values
}

// param is one path or query parameter of an operation.
type param struct {
	name     string
	in       string // "path" or "query"
	explode  bool   // arrays as repeated keys instead of comma-separated
	required bool
}

// deriveTools turns every documented, non-hidden GET operation of doc that
// answers JSON into a tool, sorted by name. Only the GET member of a path item is ever read, so
// no write operation can become a tool. It fails on a missing, malformed or
// duplicate operation id, a missing or unknown toolset, or a 200 answer
// whose schema cannot become an object output schema.
func deriveTools(doc *huma.OpenAPI) ([]toolSpec, error) {
	var specs []toolSpec
	seen := map[string]bool{}
	for path, item := range doc.Paths {
		op := item.Get
		if op == nil || op.Hidden || !answersJSON(op) {
			continue
		}
		decl, ok := api.Declared(op)
		if !ok {
			return nil, fmt.Errorf("tools: GET %s: %q is not declared with api.Register", path, op.OperationID)
		}
		if decl.Public {
			continue // a public GET serves what MCP offers as a resource
		}
		if !validToolName(op.OperationID) {
			return nil, fmt.Errorf("tools: GET %s: operation id %q is not a valid tool name", path, op.OperationID)
		}
		if seen[op.OperationID] {
			return nil, fmt.Errorf("tools: GET %s: duplicate operation id %q", path, op.OperationID)
		}
		seen[op.OperationID] = true
		spec, err := specFor(doc, path, op, decl)
		if err != nil {
			return nil, fmt.Errorf("tools: %s: %w", op.OperationID, err)
		}
		specs = append(specs, spec)
	}
	slices.SortFunc(specs, func(a, b toolSpec) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	if err := shareDescriptions(specs); err != nil {
		return nil, err
	}
	linkListers(specs)
	for i := range specs {
		raw, err := admitProblems(specs[i].tool.RawOutputSchema, specs[i].rootDef)
		if err != nil {
			return nil, err
		}
		specs[i].tool.RawOutputSchema = raw
	}
	return specs, nil
}

// answersJSON reports whether the operation's success answer is JSON; one
// that answers raw bytes (an image download) is no tool.
func answersJSON(op *huma.Operation) bool {
	for status, r := range op.Responses {
		if strings.HasPrefix(status, "2") && len(r.Content) > 0 {
			_, ok := r.Content["application/json"]
			return ok
		}
	}
	return true
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
func specFor(doc *huma.OpenAPI, path string, op *huma.Operation, decl api.Op) (toolSpec, error) {
	spec := toolSpec{path: path}
	if !slices.Contains(api.Toolsets(), decl.Toolset) {
		return spec, fmt.Errorf("toolset %q is not one of %v (declare Op.Toolset)", decl.Toolset, api.Toolsets())
	}
	spec.toolset, spec.permissions = decl.Toolset, decl.Permissions
	raw, err := spec.inputSchema(doc, op)
	if err != nil {
		return spec, err
	}
	out, rootDef, err := outputSchema(doc, op)
	if err != nil {
		return spec, err
	}
	spec.rootDef = rootDef
	spec.itemKey, _ = op.Extensions[api.ExtItemKey].([]string)
	spec.tool = newTool(decl, raw, out)
	return spec, nil
}

// inputSchema notes op's path and query parameters as the tool's
// arguments and returns the arguments' schema: an object of them, the
// path's and the required query parameters required, nothing else allowed.
func (spec *toolSpec) inputSchema(doc *huma.OpenAPI, op *huma.Operation) (json.RawMessage, error) {
	props := map[string]any{}
	required := []string{}
	for _, p := range op.Parameters {
		if p.In != "path" && p.In != "query" {
			continue // headers and cookies are not tool arguments
		}
		schema, err := paramSchema(doc, p)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		props[p.Name] = schema
		if spec.inputProps == nil {
			spec.inputProps = map[string]map[string]any{}
		}
		spec.inputProps[p.Name] = schema
		req := p.In == "path" || p.Required
		if req {
			required = append(required, p.Name)
		}
		spec.params = append(spec.params, param{name: p.Name, in: p.In, required: req,
			explode: p.Explode != nil && *p.Explode})
		spec.list = spec.list || p.Name == "fields" && p.In == "query"
	}
	in := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		in["required"] = required
	}
	return json.Marshal(in)
}

// newTool builds the MCP tool with explicit annotations. It must use
// NewToolWithRawSchema: mcp.NewTool plus WithRawInputSchema sets both
// schemas and then fails to marshal. The description is the declared one
// (the OpenAPI document's adds the permission rule, which tools/list shows
// by showing a token only the tools it can call), or the summary when none;
// the summary is otherwise the title.
func newTool(decl api.Op, schema, output json.RawMessage) mcp.Tool {
	desc := cmp.Or(decl.Description, decl.Summary)
	t := mcp.NewToolWithRawSchema(decl.ID, desc, schema)
	t.RawOutputSchema = output
	if desc != decl.Summary { // else the description says it already
		t.Title = decl.Summary
	}
	// destructiveHint and idempotentHint mean something only when
	// readOnlyHint is false (MCP), so they are left out.
	t.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint:  mcp.ToBoolPtr(true),
		OpenWorldHint: mcp.ToBoolPtr(decl.OpenWorld),
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
	if err := inlineRefs(doc, m, nil); err != nil {
		return nil, err
	}
	compact(m)
	// The server names an over-long argument; the limit only costs tokens.
	// Examples (the docs page's, on a schema or its items) only cost tokens too.
	schemawalk.Each(m, func(node map[string]any) {
		delete(node, "maxLength")
		delete(node, "examples")
	})
	if desc := argDescription(p, m); desc != "" {
		m["description"] = desc
	}
	return m, nil
}

// argDescription is what a tool argument's description adds to its schema
// and the server's instructions: a cursor's is said there once; an enum's
// values (one, or an array of any of them) are in the schema, so the
// sentence listing them is left out.
func argDescription(p *huma.Param, schema map[string]any) string {
	if p.Name == "cursor" && p.In == "query" {
		return ""
	}
	if enum, ok := schema["enum"].([]any); ok {
		return strings.TrimSpace(strings.TrimSuffix(p.Description, api.EnumSentence(enum)))
	}
	if items, ok := schema["items"].(map[string]any); ok && items["enum"] != nil {
		enum, _ := items["enum"].([]any)
		return strings.TrimSpace(strings.TrimSuffix(p.Description, api.AnyOfSentence(enum)))
	}
	return p.Description
}

// inlineRefs replaces every {"$ref": "#/components/schemas/X"} inside
// schema by the referenced schema, so the tool's input schema stands alone.
// stack holds the references being expanded, to refuse a recursive schema.
func inlineRefs(doc *huma.OpenAPI, schema map[string]any, stack []string) error {
	return schemawalk.Walk(schema, func(node map[string]any) error {
		ref, ok := node["$ref"].(string)
		if !ok {
			return nil
		}
		target, err := inlineRef(doc, ref, stack)
		if err != nil {
			return err
		}
		clear(node)
		maps.Copy(node, target)
		return schemawalk.SkipChildren // inlineRef inlined target's references
	})
}

// inlineRef resolves one component reference, recursively inlined.
func inlineRef(doc *huma.OpenAPI, ref string, stack []string) (map[string]any, error) {
	if slices.Contains(stack, ref) {
		return nil, fmt.Errorf("recursive schema %s cannot be a tool argument", ref)
	}
	m, err := component(doc, ref)
	if err != nil {
		return nil, err
	}
	if err := inlineRefs(doc, m, append(stack, ref)); err != nil {
		return nil, err
	}
	return m, nil
}

// remarshal converts v to a generic JSON value through its JSON encoding.
func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

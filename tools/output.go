package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/api"
	"platformapi/api/schemawalk"
)

// outputSchema derives a tool's output schema from the operation's 200 JSON
// answer: the answer's object schema with every component it references in
// $defs (references rewritten to #/$defs/…), made compact: examples, numeric
// formats and additionalProperties:false are left out (members may be added
// within v1). In a list (an operation declaring its item key) the item's
// required members are only its key, as `fields` may leave the others out.
func outputSchema(doc *huma.OpenAPI, op *huma.Operation) (json.RawMessage, string, error) {
	resp := op.Responses["200"]
	if resp == nil || resp.Content["application/json"] == nil || resp.Content["application/json"].Schema == nil {
		return nil, "", errors.New("no 200 application/json answer to derive an output schema from")
	}
	var root map[string]any
	if err := remarshal(resp.Content["application/json"].Schema, &root); err != nil {
		return nil, "", err
	}
	defs := map[string]any{}
	rootName := ""
	if ref, ok := root["$ref"].(string); ok {
		rootName = strings.TrimPrefix(ref, schemawalk.ComponentPrefix)
		var err error
		if root, err = outputComponent(doc, ref); err != nil {
			return nil, "", err
		}
	}
	if err := collectDefs(doc, root, defs); err != nil {
		return nil, "", err
	}
	if root["type"] != "object" {
		return nil, "", fmt.Errorf("the 200 answer is %v, not an object", root["type"])
	}
	if props, ok := root["properties"].(map[string]any); ok {
		if nc, ok := props["next_cursor"].(map[string]any); ok {
			delete(nc, "description") // the server's instructions say how cursors work
		}
	}
	if key, ok := op.Extensions[api.ExtItemKey].([]string); ok {
		if err := keyOnlyRequired(root, defs, key); err != nil {
			return nil, "", err
		}
	}
	if len(defs) > 0 {
		root["$defs"] = defs
	}
	raw, err := json.Marshal(root)
	return raw, rootName, err
}

// component reads a component schema as a generic JSON value.
func component(doc *huma.OpenAPI, ref string) (map[string]any, error) {
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
	return m, nil
}

// outputComponent is a component schema as an output schema shows it:
// compact, and without the length limits that only bind requests.
func outputComponent(doc *huma.OpenAPI, ref string) (map[string]any, error) {
	m, err := component(doc, ref)
	if err == nil {
		compact(m)
		dropLimits(m)
	}
	return m, err
}

// limitKeywords are the limits dropLimits removes.
var limitKeywords = []string{
	"maxLength", "minLength", "maxProperties", "minimum", "maximum", "pattern",
}

// dropLimits removes the limits of what clients send (lengths, numeric
// bounds, patterns, member counts) at any depth: an answer's values are
// the server's, so they only cost an agent tokens.
func dropLimits(schema map[string]any) {
	schemawalk.Each(schema, func(node map[string]any) {
		for _, k := range limitKeywords {
			delete(node, k)
		}
	})
}

// collectDefs compacts schema at any depth, rewrites its component
// references to #/$defs/… and adds each referenced component (recursively)
// to defs. A reference to the root's own component (recursion) is kept in
// $defs as well.
func collectDefs(doc *huma.OpenAPI, schema map[string]any, defs map[string]any) error {
	return schemawalk.Walk(schema, func(node map[string]any) error {
		compact(node)
		name, ok := schemawalk.ComponentRef(node)
		if !ok {
			return nil
		}
		node["$ref"] = "#/$defs/" + name
		if _, seen := defs[name]; !seen {
			def, err := outputComponent(doc, schemawalk.ComponentPrefix+name)
			if err != nil {
				return err
			}
			defs[name] = def
			if err := collectDefs(doc, def, defs); err != nil {
				return err
			}
		}
		return schemawalk.SkipChildren
	})
}

// compact drops what an agent does not need from one schema object.
func compact(m map[string]any) {
	delete(m, "examples")
	delete(m, "$schema")
	if m["additionalProperties"] == false {
		delete(m, "additionalProperties")
	}
	switch m["format"] {
	case "int32", "int64", "float", "double":
		delete(m, "format")
	}
}

// keyOnlyRequired makes the item schema of a page require only its key.
func keyOnlyRequired(root, defs map[string]any, key []string) error {
	props, _ := root["properties"].(map[string]any)
	items, _ := props["items"].(map[string]any)
	elem, _ := items["items"].(map[string]any)
	ref, _ := elem["$ref"].(string)
	def, _ := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	if def == nil {
		return errors.New("a list's items are not a component schema")
	}
	req, _ := def["required"].([]any)
	var kept []any
	for _, r := range req {
		if s, ok := r.(string); ok && slices.Contains(key, s) {
			kept = append(kept, s)
		}
	}
	if len(kept) != len(key) {
		return fmt.Errorf("the item key %v is not among the item's required members", key)
	}
	def["required"] = kept
	return nil
}

// shareDescriptions leaves a record's schema in one tool per tools/list: a
// record that is the item of a list tool is described there (of several
// such lists, the one with the fewest required arguments), and every
// other tool of the same toolset and permissions (always listed together
// with it) shows the record as an object pointing to the list tool instead
// (types, members and descriptions would only repeat what the list tool
// says). It works on the specs' raw output schemas.
func shareDescriptions(specs []toolSpec) error {
	owners := map[string]toolSpec{} // def name → list tool holding its descriptions
	for _, s := range specs {
		name := itemDefName(s.tool.RawOutputSchema)
		cur, taken := owners[name]
		if s.list && name != "" && (!taken || requiredArgs(s) <= requiredArgs(cur)) {
			owners[name] = s
		}
	}
	for _, s := range specs { // a record no list shows: the tool answering it alone owns it
		if _, ok := owners[s.rootDef]; !ok && s.rootDef != "" && !s.list {
			owners[s.rootDef] = s
		}
	}
	for i, s := range specs {
		var root map[string]any
		if err := json.Unmarshal(s.tool.RawOutputSchema, &root); err != nil {
			return err
		}
		defs, _ := root["$defs"].(map[string]any)
		changed := false
		if owner, ok := owners[s.rootDef]; ok && sharesWith(owner, s) { // the record itself, with its $defs
			root = sharedRecord(owner)
			defs, changed = nil, true
		}
		for name := range defs {
			if owner, ok := owners[name]; ok && sharesWith(owner, s) {
				defs[name], changed = sharedRecord(owner), true
			}
		}
		if changed {
			pruneDefs(root)
			raw, err := json.Marshal(root)
			if err != nil {
				return err
			}
			specs[i].tool.RawOutputSchema = raw
		}
	}
	return nil
}

// requiredArgs counts the arguments a tool cannot be called without.
func requiredArgs(s toolSpec) int {
	n := 0
	for _, p := range s.params {
		if p.required {
			n++
		}
	}
	return n
}

// sharedRecord is a shared record's schema where its owner describes it:
// an object pointing to the owner.
func sharedRecord(owner toolSpec) map[string]any {
	note := "As the answer of " + owner.tool.Name + "."
	if owner.list {
		note = "As the items of " + owner.tool.Name + "."
	}
	return map[string]any{"type": "object", "description": note}
}

// pruneDefs removes from root's $defs every schema root no longer reaches,
// directly or through other $defs, and $defs itself when it is left empty.
func pruneDefs(root map[string]any) {
	defs, _ := root["$defs"].(map[string]any)
	reached, _ := schemawalk.ReachableDefs(root)
	maps.DeleteFunc(defs, func(name string, _ any) bool { return !reached[name] })
	if len(defs) == 0 {
		delete(root, "$defs")
	}
}

// sharesWith reports whether s is always listed together with the list tool
// owner (same toolset, same permissions) and is not owner itself.
func sharesWith(owner, s toolSpec) bool {
	return owner.tool.Name != s.tool.Name && owner.toolset == s.toolset && slices.Equal(owner.permissions, s.permissions)
}

// itemDefName is the $defs name of a page's items, or "".
func itemDefName(raw json.RawMessage) string {
	var root struct {
		Properties struct {
			Items struct {
				Items struct {
					Ref string `json:"$ref"`
				} `json:"items"`
			} `json:"items"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &root) != nil {
		return ""
	}
	return strings.TrimPrefix(root.Properties.Items.Items.Ref, "#/$defs/")
}

// problemBranch is what a tool error's structured content (a problem
// document) satisfies: it has a type and a code. It is kept this small
// because every tool carries it.
var problemBranch = map[string]any{"required": []any{"type", "code"}}

// admitProblems makes an output schema admit the problem document of a
// tool error besides the answer: {"type":"object","anyOf":[{"$ref": the
// answer}, problemBranch]} with the answer moved into $defs (named after
// its component, or "Result"). Clients such as the official TypeScript SDK
// validate structuredContent against outputSchema even on errors.
func admitProblems(raw json.RawMessage, name string) (json.RawMessage, error) {
	var answer map[string]any
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, err
	}
	if name == "" {
		name = "Result"
	}
	defs, _ := answer["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
	}
	delete(answer, "$defs")
	defs[name] = answer
	return json.Marshal(map[string]any{"type": "object", "$defs": defs,
		"anyOf": []any{map[string]any{"$ref": "#/$defs/" + name}, problemBranch}})
}

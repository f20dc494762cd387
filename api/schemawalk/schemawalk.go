// Package schemawalk walks JSON Schemas held as generic JSON values
// (map[string]any, []any, as encoding/json decodes them) or as Huma holds
// them (*huma.Schema): the one walker behind the MCP tools' schema rewriting
// (package tools), the OpenAPI document's schema fixes (package api) and
// the one computation of which schemas references reach (Reachable).
//
// A walk goes through the JSON Schema 2020-12 keywords that hold
// subschemas and through no other member: values of enum, const, default,
// examples, example, required, x- extensions and unknown keywords are data,
// never visited, so a visit that rewrites schemas cannot rewrite them; nor
// is a map of subschemas (the value of properties, $defs, …) itself visited,
// so a member named like a keyword (a "description" property) is not read
// as one.
package schemawalk

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// ComponentPrefix starts every reference to a component schema of an
// OpenAPI document.
const ComponentPrefix = "#/components/schemas/"

// SkipChildren, returned by a visit, makes the walk pass over the
// subschemas of the node just visited; it is not an error of the walk.
var SkipChildren = errors.New("schemawalk: skip the subschemas of this node")

// shape is how a keyword holds subschemas.
type shape int

const (
	one     shape = iota // a schema
	list                 // an array of schemas
	members              // an object whose member values are schemas
)

// keywords are the keywords holding subschemas, in the order a walk takes
// them; items may also be an array of schemas (drafts before 2020-12).
var keywords = []struct {
	name  string
	shape shape
}{
	{"$defs", members}, {"definitions", members},
	{"properties", members}, {"patternProperties", members},
	{"additionalProperties", one}, {"unevaluatedProperties", one}, {"propertyNames", one},
	{"dependentSchemas", members},
	{"prefixItems", list}, {"items", one}, {"additionalItems", one},
	{"unevaluatedItems", one}, {"contains", one},
	{"allOf", list}, {"anyOf", list}, {"oneOf", list}, {"not", one},
	{"if", one}, {"then", one}, {"else", one},
	{"contentSchema", one},
}

// Walk calls visit on schema and then, depth first (pre-order), on each of
// its subschemas: the schema objects under the keywords above, in that
// order, the members of a map of subschemas in the order of their names,
// an array's in index order. Boolean schemas and anything that is not a
// JSON object are not visited. visit may change its node, even replace all
// its members: the node's subschemas are read after visit returns. A visit
// returning SkipChildren passes over them; any other error ends the walk
// and is Walk's.
func Walk(schema any, visit func(node map[string]any) error) error {
	node, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	return walk(node, subschemas, visit)
}

// Each is Walk for a visit that neither fails nor skips.
func Each(schema any, visit func(node map[string]any)) {
	_ = Walk(schema, func(node map[string]any) error { visit(node); return nil })
}

// walk is the one traversal behind Walk and WalkHuma: visit node, then,
// unless the visit says SkipChildren, walk each of children(node) in turn.
func walk[N any](node N, children func(N) []N, visit func(N) error) error {
	switch err := visit(node); {
	case errors.Is(err, SkipChildren):
		return nil
	case err != nil:
		return err
	}
	for _, child := range children(node) {
		if err := walk(child, children, visit); err != nil {
			return err
		}
	}
	return nil
}

// subschemas lists the schema objects that are direct subschemas of node.
func subschemas(node map[string]any) []map[string]any {
	var subs []map[string]any
	add := func(v any) {
		if m, ok := v.(map[string]any); ok {
			subs = append(subs, m)
		}
	}
	for _, k := range keywords {
		switch v := node[k.name].(type) {
		case []any:
			if k.shape == list || k.name == "items" {
				for _, e := range v {
					add(e)
				}
			}
		case map[string]any:
			switch k.shape {
			case one:
				add(v)
			case members:
				for _, name := range slices.Sorted(maps.Keys(v)) {
					add(v[name])
				}
			}
		}
	}
	return subs
}

// ComponentRef is the component schema name node refers to, if its $ref is
// #/components/schemas/name.
func ComponentRef(node map[string]any) (string, bool) {
	ref, _ := node["$ref"].(string)
	if name, ok := strings.CutPrefix(ref, ComponentPrefix); ok && name != "" {
		return name, true
	}
	return "", false
}

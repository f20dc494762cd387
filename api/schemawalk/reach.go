package schemawalk

import (
	"maps"
	"slices"
	"strings"
)

// Reachable computes which component schemas doc reaches: those the
// schemas of doc refer to ($ref #/components/schemas/name), then those
// these refer to, and so on. doc is an OpenAPI document or a part of one
// (its paths, say) as a generic JSON value; schemas are its component
// schemas by name. A name referred to that schemas lacks is in missing,
// once, in the order first met. Only $ref members count, not discriminator
// mappings.
func Reachable(doc any, schemas map[string]any) (reached map[string]bool, missing []string) {
	var starts []any
	documentSchemas(doc, func(s any) { starts = append(starts, s) })
	return reach(starts, schemas, ComponentRef)
}

// ReachableDefs computes which members of schema's $defs schema reaches:
// those its subschemas outside $defs refer to ($ref #/$defs/name), then
// those these refer to, and so on. A name referred to that $defs lacks is
// in missing, once, in the order first met. schema is not changed.
func ReachableDefs(schema map[string]any) (reached map[string]bool, missing []string) {
	defs, _ := schema["$defs"].(map[string]any)
	rest := maps.Clone(schema)
	delete(rest, "$defs")
	return reach([]any{rest}, defs, defsRef)
}

// reach is the one computation of reachability: the names of schemas that
// the schemas starts refer to (a name by ref), then those these refer to,
// and so on, each walked once; names schemas lacks are missing.
func reach(starts []any, schemas map[string]any,
	ref func(node map[string]any) (string, bool)) (reached map[string]bool, missing []string) {
	reached = map[string]bool{}
	var queue []string
	collect := func(node map[string]any) {
		if name, ok := ref(node); ok {
			queue = append(queue, name)
		}
	}
	for _, s := range starts {
		Each(s, collect)
	}
	for ; len(queue) > 0; queue = queue[1:] {
		name := queue[0]
		if reached[name] || slices.Contains(missing, name) {
			continue
		}
		if schemas[name] == nil {
			missing = append(missing, name)
			continue
		}
		reached[name] = true
		Each(schemas[name], collect)
	}
	return reached, missing
}

// defsRef is the $defs member node refers to, if its $ref is #/$defs/name.
func defsRef(node map[string]any) (string, bool) {
	ref, _ := node["$ref"].(string)
	if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok && name != "" {
		return name, true
	}
	return "", false
}

// documentSchemas calls found with each schema of an OpenAPI document
// outside its component schemas: the value of every member named schema
// (of a parameter, header or media type), met by descending every other
// object and array of doc except the values of members named schemas (the
// component schemas: what is reached, not where reaching starts), example
// and examples (sample data).
func documentSchemas(doc any, found func(schema any)) {
	switch x := doc.(type) {
	case []any:
		for _, e := range x {
			documentSchemas(e, found)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			switch k {
			case "schema":
				found(x[k])
			case "schemas", "example", "examples":
			default:
				documentSchemas(x[k], found)
			}
		}
	}
}

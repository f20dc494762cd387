package schemawalk

import (
	"maps"
	"slices"
)

// Reachable computes which component schemas doc reaches: those the
// schemas of doc refer to ($ref #/components/schemas/name), then those
// these refer to, and so on. doc is an OpenAPI document or a part of one
// (its paths, say) as a generic JSON value; schemas are its component
// schemas by name. A name referred to that schemas lacks is in missing,
// once, in the order first met. Only $ref members count, not discriminator
// mappings.
func Reachable(doc any, schemas map[string]any) (reached map[string]bool, missing []string) {
	reached = map[string]bool{}
	var queue []string
	collect := func(node map[string]any) {
		if name, ok := ComponentRef(node); ok {
			queue = append(queue, name)
		}
	}
	documentSchemas(doc, func(s any) { Each(s, collect) })
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

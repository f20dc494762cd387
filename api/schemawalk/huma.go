package schemawalk

import (
	"maps"
	"slices"

	"github.com/danielgtaylor/huma/v2"
)

// WalkHuma is Walk over a schema as Huma holds it: visit is called on s and
// then, depth first, on each schema under its fields Properties (in the
// order of the names), AdditionalProperties (when a schema, not a boolean),
// Items, AllOf, AnyOf, OneOf and Not, the keywords of Walk that huma.Schema
// has. A nil schema is not visited, and a $ref is not followed. SkipChildren
// and errors are as in Walk.
func WalkHuma(s *huma.Schema, visit func(s *huma.Schema) error) error {
	if s == nil {
		return nil
	}
	return walk(s, humaSubschemas, visit)
}

// humaSubschemas lists the schemas directly under s, in the order of
// keywords.
func humaSubschemas(s *huma.Schema) []*huma.Schema {
	props := make([]*huma.Schema, 0, len(s.Properties))
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		props = append(props, s.Properties[name])
	}
	extra, _ := s.AdditionalProperties.(*huma.Schema)
	subs := slices.Concat(props, []*huma.Schema{extra, s.Items}, s.AllOf, s.AnyOf, s.OneOf,
		[]*huma.Schema{s.Not})
	return slices.DeleteFunc(subs, func(sub *huma.Schema) bool { return sub == nil })
}

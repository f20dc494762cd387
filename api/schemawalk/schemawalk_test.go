package schemawalk_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/schemawalk"
)

// decode is a schema written as JSON text, as encoding/json decodes it.
func decode(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	return v
}

// titles walks schema and lists the title of each node visited, or what
// the node is when it has none (a map of subschemas taken for a schema).
func titles(t *testing.T, schema any) []string {
	t.Helper()
	var got []string
	schemawalk.Each(schema, func(node map[string]any) {
		title, ok := node["title"].(string)
		if !ok {
			title = fmt.Sprintf("untitled %v", node)
		}
		got = append(got, title)
	})
	return got
}

// TestWalk_VisitsSubschemasOnly: the nodes a walk visits, in order, are
// the schema objects under the subschema keywords; data (enum, const,
// default, examples, example, required, extensions) and boolean schemas are
// never visited, nor a map of subschemas itself.
func TestWalk_VisitsSubschemasOnly(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         []string
	}{
		{"nested properties, items, anyOf, $defs, additionalProperties", `{"title":"root",
			"properties":{"b":{"title":"b","items":{"title":"b.items",
				"anyOf":[{"title":"b.any0"},{"title":"b.any1","$ref":"#/$defs/D"}]}},
				"a":{"title":"a","additionalProperties":{"title":"a.extra"}}},
			"$defs":{"D":{"title":"D","properties":{"x":{"title":"D.x"}}}}}`,
			[]string{"root", "D", "D.x", "a", "a.extra", "b", "b.items", "b.any0", "b.any1"}},
		{"every other keyword holding subschemas", `{"title":"root",
			"definitions":{"d":{"title":"definitions"}},
			"patternProperties":{"^x-":{"title":"patternProperties"}},
			"unevaluatedProperties":{"title":"unevaluatedProperties"},
			"propertyNames":{"title":"propertyNames"},
			"dependentSchemas":{"k":{"title":"dependentSchemas"}},
			"prefixItems":[{"title":"prefixItems0"},{"title":"prefixItems1"}],
			"additionalItems":{"title":"additionalItems"},
			"unevaluatedItems":{"title":"unevaluatedItems"},"contains":{"title":"contains"},
			"allOf":[{"title":"allOf"}],"oneOf":[{"title":"oneOf"}],"not":{"title":"not"},
			"if":{"title":"if"},"then":{"title":"then"},"else":{"title":"else"},
			"contentSchema":{"title":"contentSchema"}}`,
			[]string{"root", "definitions", "patternProperties", "unevaluatedProperties",
				"propertyNames", "dependentSchemas", "prefixItems0", "prefixItems1", "additionalItems",
				"unevaluatedItems", "contains", "allOf", "oneOf", "not", "if", "then", "else",
				"contentSchema"}},
		{"items as an array of schemas (drafts before 2020-12)",
			`{"title":"root","items":[{"title":"i0"},{"title":"i1"}]}`, []string{"root", "i0", "i1"}},
		{"data is not visited", `{"title":"root",
			"enum":[{"title":"enum","type":"string"}],"const":{"title":"const"},
			"default":{"title":"default","properties":{}},
			"examples":[{"title":"examples","items":{"title":"examples.items"}}],
			"example":{"title":"example"},"required":["title"],
			"x-extension":{"title":"x-extension"},"unknownKeyword":{"title":"unknown"},
			"discriminator":{"mapping":{"a":"#/components/schemas/A"}}}`,
			[]string{"root"}},
		{"a member named like a keyword is a member, not a keyword", `{"title":"root",
			"properties":{"title":{"title":"title member"},"description":{"title":"description member"},
				"items":{"title":"items member"}}}`,
			[]string{"root", "description member", "items member", "title member"}},
		{"boolean schemas are not visited",
			`{"title":"root","additionalProperties":false,"items":true,"not":{"title":"not"}}`,
			[]string{"root", "not"}},
		{"a keyword of the wrong shape is passed over",
			`{"title":"root","properties":[{"title":"p"}],"allOf":{"title":"a"},"not":[{"title":"n"}]}`,
			[]string{"root"}},
		{"a root that is not an object", `[{"title":"element"}]`, nil},
		{"a boolean root", `true`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, titles(t, decode(t, tc.schema))); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWalk_SkipChildrenAndErrors: SkipChildren passes over one node's
// subschemas only; any other error ends the walk and is returned.
func TestWalk_SkipChildrenAndErrors(t *testing.T) {
	schema := decode(t, `{"title":"root","properties":{
		"a":{"title":"a","items":{"title":"a.items"}},"b":{"title":"b","not":{"title":"b.not"}}}}`)
	stop := errors.New("stop")
	for _, tc := range []struct {
		name    string
		answer  map[string]error
		want    []string
		wantErr error
	}{
		{"skip", map[string]error{"a": schemawalk.SkipChildren},
			[]string{"root", "a", "b", "b.not"}, nil},
		{"skip at the root", map[string]error{"root": schemawalk.SkipChildren}, []string{"root"}, nil},
		{"error", map[string]error{"a.items": stop}, []string{"root", "a", "a.items"}, stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := schemawalk.Walk(schema, func(node map[string]any) error {
				title := node["title"].(string)
				got = append(got, title)
				return tc.answer[title]
			})
			if !errors.Is(err, tc.wantErr) || err != nil && tc.wantErr == nil {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWalk_ReadsSubschemasAfterTheVisit: a visit may replace its node's
// members (as inlining a reference does); the walk goes on into the new
// ones.
func TestWalk_ReadsSubschemasAfterTheVisit(t *testing.T) {
	schema := decode(t, `{"title":"root","items":{"title":"ref","$ref":"#/$defs/X"}}`)
	got := []string{}
	schemawalk.Each(schema, func(node map[string]any) {
		got = append(got, node["title"].(string))
		if node["$ref"] != nil {
			clear(node)
			node["title"] = "inlined"
			node["properties"] = map[string]any{"p": map[string]any{"title": "inlined.p"}}
		}
	})
	if diff := cmp.Diff([]string{"root", "ref", "inlined.p"}, got); diff != "" {
		t.Errorf("visited (-want +got):\n%s", diff)
	}
}

func TestComponentRef(t *testing.T) {
	for ref, want := range map[any]string{
		"#/components/schemas/Project": "Project", "#/$defs/Project": "", "#/components/schemas/": "",
		"#/components/headers/X-Request-ID": "", 42: "",
	} {
		name, ok := schemawalk.ComponentRef(map[string]any{"$ref": ref})
		if name != want || ok != (want != "") {
			t.Errorf("%v: %q %v, want %q", ref, name, ok, want)
		}
	}
}

package schemawalk_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/schemawalk"
)

// TestReachable: what an OpenAPI document reaches is found through the
// $ref members of its schemas (parameters, headers, media types) and of
// the component schemas these reach, transitively and through cycles; not
// through sample data, text that only looks like a reference, or the
// component schemas themselves.
func TestReachable(t *testing.T) {
	doc := decode(t, `{
	"paths":{"/things":{"get":{
		"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Query"}}],
		"description":"Answers a \"#/components/schemas/InText\" list.",
		"responses":{"200":{
			"headers":{"X-Count":{"schema":{"$ref":"#/components/schemas/Count"}}},
			"content":{"application/json":{
				"schema":{"type":"array","items":{"$ref":"#/components/schemas/Thing"}},
				"examples":{"one":{"value":{"$ref":"#/components/schemas/InExample"}}},
				"example":{"schema":{"$ref":"#/components/schemas/InExample"}}}}}}}}},
	"components":{"schemas":{
		"Query":{"type":"string"},
		"Count":{"type":"integer"},
		"Thing":{"properties":{"parent":{"$ref":"#/components/schemas/Thing"},
			"owner":{"anyOf":[{"$ref":"#/components/schemas/Owner"},{"type":"null"}]}}},
		"Owner":{"properties":{"things":{"items":{"$ref":"#/components/schemas/Thing"}},
			"lost":{"$ref":"#/components/schemas/Gone"},
			"again":{"$ref":"#/components/schemas/Gone"}},
			"default":{"$ref":"#/components/schemas/InDefault"}},
		"Unused":{"$ref":"#/components/schemas/AlsoUnused"},
		"AlsoUnused":{"type":"object"},
		"InText":{},"InExample":{},"InDefault":{}}}}`).(map[string]any)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	reached, missing := schemawalk.Reachable(doc, schemas)
	want := map[string]bool{"Query": true, "Count": true, "Thing": true, "Owner": true}
	if diff := cmp.Diff(want, reached); diff != "" {
		t.Errorf("reached (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Gone"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	// A part of a document (the paths of one tag) reaches the same.
	if part, _ := schemawalk.Reachable(doc["paths"], schemas); !cmp.Equal(want, part) {
		t.Errorf("from the paths alone: %v", part)
	}
}

// TestReachableDefs: what a JSON Schema reaches of its $defs is found
// through the $ref #/$defs/… of every subschema keyword outside $defs and
// of the definitions these reach, transitively and through cycles; not
// through data, component references, or the definitions themselves.
func TestReachableDefs(t *testing.T) {
	defs := `{"A":{"type":"string"},"B":{"$ref":"#/$defs/C"},"C":{"items":{"$ref":"#/$defs/D"}},
		"D":{},"Cyc1":{"properties":{"next":{"$ref":"#/$defs/Cyc2"}}},
		"Cyc2":{"anyOf":[{"$ref":"#/$defs/Cyc1"},{"type":"null"}]},"Unused":{"$ref":"#/$defs/A"}}`
	const refA = `{"$ref":"#/$defs/A"}`
	for _, tc := range []struct {
		name, schema string
		noDefs       bool
		want         []string
		missing      []string
	}{
		{"properties", `{"properties":{"a":` + refA + `}}`, false, []string{"A"}, nil},
		{"items", `{"items":` + refA + `}`, false, []string{"A"}, nil},
		{"prefixItems", `{"prefixItems":[{"type":"null"},` + refA + `]}`, false, []string{"A"}, nil},
		{"additionalProperties", `{"additionalProperties":` + refA + `}`, false, []string{"A"}, nil},
		{"allOf", `{"allOf":[` + refA + `]}`, false, []string{"A"}, nil},
		{"anyOf", `{"anyOf":[{"type":"null"},` + refA + `]}`, false, []string{"A"}, nil},
		{"oneOf", `{"oneOf":[` + refA + `]}`, false, []string{"A"}, nil},
		{"not", `{"not":` + refA + `}`, false, []string{"A"}, nil},
		{"a $ref chain", `{"$ref":"#/$defs/B"}`, false, []string{"B", "C", "D"}, nil},
		{"a $defs cycle", `{"properties":{"x":{"$ref":"#/$defs/Cyc1"}}}`, false,
			[]string{"Cyc1", "Cyc2"}, nil},
		{"not data, component references or $defs", `{"default":` + refA + `,"examples":[` + refA +
			`],"const":` + refA + `,"items":{"$ref":"#/components/schemas/A"}}`, false, nil, nil},
		{"missing, once", `{"anyOf":[{"$ref":"#/$defs/Gone"},{"$ref":"#/$defs/Gone"},` + refA + `]}`,
			false, []string{"A"}, []string{"Gone"}},
		{"no $defs", `{"items":` + refA + `}`, true, nil, []string{"A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := decode(t, tc.schema).(map[string]any)
			if !tc.noDefs {
				schema["$defs"] = decode(t, defs)
			}
			before := decode(t, mustJSON(t, schema))
			reached, missing := schemawalk.ReachableDefs(schema)
			want := map[string]bool{}
			for _, name := range tc.want {
				want[name] = true
			}
			if diff := cmp.Diff(want, reached); diff != "" {
				t.Errorf("reached (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.missing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, any(schema)); diff != "" {
				t.Errorf("the schema changed (-before +after):\n%s", diff)
			}
		})
	}
}

// mustJSON is v as JSON text.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

package schemawalk_test

import (
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

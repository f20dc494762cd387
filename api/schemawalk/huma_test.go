package schemawalk_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"platformapi/api/schemawalk"
)

// humaTitles walks s with WalkHuma and lists the title of each node visited,
// skipping the subschemas of the titles in skip.
func humaTitles(t *testing.T, s *huma.Schema, skip ...string) []string {
	t.Helper()
	var got []string
	err := schemawalk.WalkHuma(s, func(node *huma.Schema) error {
		got = append(got, node.Title)
		for _, title := range skip {
			if node.Title == title {
				return schemawalk.SkipChildren
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("WalkHuma: %v", err)
	}
	return got
}

// titled is a schema known by its title.
func titled(title string) *huma.Schema { return &huma.Schema{Title: title} }

// TestWalkHuma_VisitsEverySubschemaField: WalkHuma visits the schema under
// each field of huma.Schema that holds subschemas, at any depth, in Walk's
// keyword order; not boolean additionalProperties, nil schemas, or what a
// skipped node holds.
func TestWalkHuma_VisitsEverySubschemaField(t *testing.T) {
	nested := &huma.Schema{Title: "root", Properties: map[string]*huma.Schema{
		"b": {Title: "b", Items: &huma.Schema{Title: "b.items", Not: titled("b.items.not")}},
		"a": {Title: "a", AdditionalProperties: &huma.Schema{Title: "a.extra",
			AnyOf: []*huma.Schema{titled("a.extra.any0"), nil, titled("a.extra.any1")}}},
	}}
	every := &huma.Schema{Title: "root",
		Properties:           map[string]*huma.Schema{"p": titled("properties")},
		AdditionalProperties: titled("additionalProperties"), Items: titled("items"),
		AllOf: []*huma.Schema{titled("allOf")}, AnyOf: []*huma.Schema{titled("anyOf")},
		OneOf: []*huma.Schema{titled("oneOf")}, Not: titled("not")}
	for _, tc := range []struct {
		name   string
		schema *huma.Schema
		skip   []string
		want   []string
	}{
		{"nested", nested, nil,
			[]string{"root", "a", "a.extra", "a.extra.any0", "a.extra.any1", "b", "b.items", "b.items.not"}},
		{"every field, in keyword order", every, nil, []string{"root", "properties",
			"additionalProperties", "items", "allOf", "anyOf", "oneOf", "not"}},
		{"additionalProperties false", &huma.Schema{Title: "root", AdditionalProperties: false,
			Not: titled("not")}, nil, []string{"root", "not"}},
		{"a $ref is not followed", &huma.Schema{Title: "root",
			Items: &huma.Schema{Title: "ref", Ref: "#/components/schemas/X"}}, nil, []string{"root", "ref"}},
		{"skip", nested, []string{"a"}, []string{"root", "a", "b", "b.items", "b.items.not"}},
		{"nil", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, humaTitles(t, tc.schema, tc.skip...)); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWalkHuma_AgreesWithWalk: WalkHuma visits the schemas Walk visits in
// the same schema as JSON, in the same order.
func TestWalkHuma_AgreesWithWalk(t *testing.T) {
	s := &huma.Schema{Title: "root", Type: "object", Properties: map[string]*huma.Schema{
		"z": {Title: "z", Type: "array", Items: &huma.Schema{Title: "z.items",
			OneOf: []*huma.Schema{titled("z.one0"), titled("z.one1")}}},
		"y": {Title: "y", AllOf: []*huma.Schema{titled("y.all")}, Not: titled("y.not")},
	}, AdditionalProperties: &huma.Schema{Title: "extra", AnyOf: []*huma.Schema{titled("extra.any")}}}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(titles(t, decode(t, string(raw))), humaTitles(t, s)); diff != "" {
		t.Errorf("WalkHuma (-Walk +WalkHuma):\n%s", diff)
	}
}

// TestWalkHuma_KnowsEveryHumaSubschemaField: every field of huma.Schema that
// can hold a schema is walked, so a field a Huma upgrade adds is noticed.
func TestWalkHuma_KnowsEveryHumaSubschemaField(t *testing.T) {
	schema := reflect.TypeFor[*huma.Schema]()
	var root huma.Schema
	v := reflect.ValueOf(&root).Elem()
	var want []string
	for _, f := range reflect.VisibleFields(v.Type()) {
		sub, field := reflect.ValueOf(titled(f.Name)), v.FieldByIndex(f.Index)
		switch {
		case !f.IsExported():
			continue
		case f.Type == schema || f.Name == "AdditionalProperties":
			field.Set(sub)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem() == schema:
			field.Set(reflect.Append(field, sub))
		case f.Type.Kind() == reflect.Map && f.Type.Elem() == schema:
			field.Set(reflect.MakeMap(f.Type))
			field.SetMapIndex(reflect.ValueOf("member"), sub)
		default:
			continue
		}
		want = append(want, f.Name)
	}
	got := humaTitles(t, &root)
	sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	if diff := cmp.Diff(want, got[1:], sorted); diff != "" {
		t.Errorf("fields walked (-want +got):\n%s", diff)
	}
}

// TestWalkHuma_Error: an error of a visit other than SkipChildren ends the
// walk and is WalkHuma's.
func TestWalkHuma_Error(t *testing.T) {
	stop := errors.New("stop")
	s := &huma.Schema{Title: "root", Items: titled("items"), Not: titled("not")}
	var got []string
	err := schemawalk.WalkHuma(s, func(node *huma.Schema) error {
		got = append(got, node.Title)
		if node.Title == "items" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !cmp.Equal([]string{"root", "items"}, got) {
		t.Errorf("error %v after %v, want stop after [root items]", err, got)
	}
}

package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// record is a JSON object as the API sends it (numbers as json.Number).
type record = map[string]any

// attrs are the attributes of a resource or data source object, by name;
// attribute names are the API's member names.
type attrs = map[string]tftypes.Value

// toRecord turns a generated response value into a record.
func toRecord(v any) (record, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var r record
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return r, d.Decode(&r)
}

// typed turns a request object into the generated request type T; a member
// T does not have is an error, so a body only ever holds members of the
// operation's schema.
func typed[T any](m record) (T, error) {
	var v T
	raw, err := json.Marshal(m)
	if err != nil {
		return v, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return v, fmt.Errorf("request body for %T: %w", v, err)
	}
	return v, nil
}

// members lists the JSON members of a generated request type and whether
// each is nullable (a nullable.Nullable field: the schema allows null).
func members(v any) map[string]bool {
	t := reflect.TypeOf(v)
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type.PkgPath() == "github.com/oapi-codegen/nullable"
	}
	return out
}

// objectAttrs splits an object value into its attributes (nil for null).
func objectAttrs(v tftypes.Value) attrs {
	var m attrs
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	if err := v.As(&m); err != nil {
		return nil
	}
	return m
}

// fromJSON converts a decoded JSON value to a value of type t. A string
// attribute receiving a JSON object or array keeps its compact JSON text.
func fromJSON(v any, t tftypes.Type) (tftypes.Value, error) {
	if v == nil {
		return tftypes.NewValue(t, nil), nil
	}
	switch {
	case t.Is(tftypes.String):
		if s, ok := v.(string); ok {
			return tftypes.NewValue(t, s), nil
		}
		raw, err := json.Marshal(v)
		return tftypes.NewValue(t, string(raw)), err
	case t.Is(tftypes.Number):
		f, _, err := big.ParseFloat(fmt.Sprint(v), 10, 512, big.ToNearestEven)
		return tftypes.NewValue(t, f), err
	case t.Is(tftypes.Bool):
		b, ok := v.(bool)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected a boolean, got %T", v)
		}
		return tftypes.NewValue(t, b), nil
	}
	return fromJSONComposite(v, t)
}

func fromJSONComposite(v any, t tftypes.Type) (tftypes.Value, error) {
	switch tt := t.(type) {
	case tftypes.List:
		return fromJSONElems(v, t, tt.ElementType)
	case tftypes.Set:
		return fromJSONElems(v, t, tt.ElementType)
	case tftypes.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected an object, got %T", v)
		}
		out := map[string]tftypes.Value{}
		for k, e := range m {
			ev, err := fromJSON(e, tt.ElementType)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = ev
		}
		return tftypes.NewValue(t, out), nil
	case tftypes.Object:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected an object, got %T", v)
		}
		return objectFromJSON(tt, m, nil)
	}
	return tftypes.Value{}, fmt.Errorf("unsupported attribute type %s", t)
}

func fromJSONElems(v any, t, elem tftypes.Type) (tftypes.Value, error) {
	items, ok := v.([]any)
	if !ok {
		return tftypes.Value{}, fmt.Errorf("expected an array, got %T", v)
	}
	out := make([]tftypes.Value, 0, len(items))
	for i, e := range items {
		ev, err := fromJSON(e, elem)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, ev)
	}
	return tftypes.NewValue(t, out), nil
}

// objectFromJSON builds an object of type t from the members of m; an
// attribute named in keep takes keep's value instead, when m lacks it.
func objectFromJSON(t tftypes.Object, m record, keep attrs) (tftypes.Value, error) {
	out := map[string]tftypes.Value{}
	for name, at := range t.AttributeTypes {
		v, ok := m[name]
		if kept, isKept := keep[name]; isKept && !ok {
			out[name] = known(kept, at)
			continue
		}
		tv, err := fromJSON(v, at)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = tv
	}
	return tftypes.NewValue(t, out), nil
}

// known is v, or null of type t when v is unknown.
func known(v tftypes.Value, t tftypes.Type) tftypes.Value {
	if !v.IsKnown() || v.Type() == nil {
		return tftypes.NewValue(t, nil)
	}
	return v
}

// toJSON converts a known value to its JSON form.
func toJSON(v tftypes.Value) any {
	if v.IsNull() {
		return nil
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case t.Is(tftypes.Bool):
		var b bool
		_ = v.As(&b)
		return b
	case t.Is(tftypes.Number):
		f := new(big.Float)
		_ = v.As(&f)
		if f.IsInt() {
			return json.Number(f.Text('f', 0))
		}
		return json.Number(f.Text('g', -1))
	}
	return toJSONComposite(v)
}

func toJSONComposite(v tftypes.Value) any {
	switch v.Type().(type) {
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var items []tftypes.Value
		_ = v.As(&items)
		out := make([]any, 0, len(items))
		for _, e := range items {
			out = append(out, toJSON(e))
		}
		return out
	}
	var m map[string]tftypes.Value
	_ = v.As(&m)
	out := map[string]any{}
	for k, e := range m {
		out[k] = toJSON(e)
	}
	return out
}

// jsonText decodes a string attribute holding JSON text (such as
// benchmarks) into its value.
func jsonText(v tftypes.Value) (any, error) {
	s, _ := toJSON(v).(string)
	var out any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return out, nil
}

// sameJSON reports whether two JSON texts hold the same value (member
// order, spacing and number spelling aside).
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

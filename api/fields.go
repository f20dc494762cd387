package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"platformapi/resources"
)

// listKeyed is implemented by list item types whose key is not the member
// `id`; the key is always kept by a member selection.
type listKeyed interface{ listKey() []string }

// itemMembers describes a list item type: its top-level JSON members in
// order and its key members.
type itemMembers struct {
	names []string
	key   []string
}

var membersCache sync.Map // reflect.Type → itemMembers

// membersOf returns the members of the item type t (cached).
func membersOf(t reflect.Type) itemMembers {
	if m, ok := membersCache.Load(t); ok {
		return m.(itemMembers)
	}
	m := itemMembers{names: jsonMembers(t), key: []string{"id"}}
	if k, ok := reflect.New(t).Elem().Interface().(listKeyed); ok {
		m.key = k.listKey()
	}
	membersCache.Store(t, m)
	return m
}

// jsonMembers lists the JSON member names of a struct type in field order,
// embedded structs without a name flattened, as encoding/json does; a
// member tagged `fields:"-"` (one a list item never carries, such as a
// single read's warnings) is not listed, so it cannot be selected.
func jsonMembers(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous || f.Tag.Get("fields") == "-":
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonMembers(f.Type)...)
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}

// ItemMembers returns the top-level members of a list's item type and the
// key members a selection always keeps; the contract lists them in the
// description of each list's `fields` parameter.
func ItemMembers(t reflect.Type) (names, key []string) {
	m := membersOf(t)
	return slices.Clone(m.names), slices.Clone(m.key)
}

// selectFields parses a `fields` value for items of type W: "" (no
// parameter) keeps every member. A value that names no member (only commas
// and spaces) and an unknown name are 400 invalid_parameter naming
// `fields`, listing the valid names.
func selectFields[W any](fields string) (map[string]bool, error) {
	m := membersOf(reflect.TypeFor[W]())
	keep := map[string]bool{}
	var unknown []string
	for f := range strings.SplitSeq(fields, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(m.names, f) {
			unknown = append(unknown, f)
		}
		keep[f] = true
	}
	if len(keep) == 0 {
		if fields == "" {
			return nil, nil
		}
		return nil, &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter, Field: "fields",
			Detail: "fields names no member; leave it out for every member, or name some: " +
				strings.Join(m.names, ", ")}
	}
	for _, k := range m.key {
		keep[k] = true
	}
	if len(unknown) > 0 {
		return nil, &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter, Field: "fields",
			Detail: "fields names unknown members (" + strings.Join(unknown, ", ") + "); valid members: " +
				strings.Join(m.names, ", ")}
	}
	return keep, nil
}

// encodeItems encodes each item as the API sends it (no HTML escaping, as
// Huma's JSON format), keeping only the selected members when sel is set.
func encodeItems[W any](items []W, sel map[string]bool) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		b, err := encodeJSON(it)
		if err != nil {
			return nil, err
		}
		if sel != nil {
			if b, err = projectMembers(b, sel); err != nil {
				return nil, err
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// encodeJSON encodes v as JSONFormat does, without the final newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := JSONFormat.Marshal(&buf, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// projectMembers keeps the members of the JSON object obj named in keep, in
// their order.
func projectMembers(obj []byte, keep map[string]bool) ([]byte, error) {
	var members orderedObject
	if err := json.Unmarshal(obj, &members); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	for _, m := range members {
		if !keep[m.name] {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		name, _ := encodeJSON(m.name)
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// orderedObject is a JSON object's members in document order.
type orderedObject []struct {
	name  string
	value json.RawMessage
}

// UnmarshalJSON reads an object's members in order.
func (o *orderedObject) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, struct {
			name  string
			value json.RawMessage
		}{name, v})
	}
	return nil
}

// pageMember is a member of a page besides items and next_cursor.
type pageMember struct {
	name  string
	value any
}

// marshalPage writes a page object: items (the encoded ones when set, else
// items), the extra members, then next_cursor.
func marshalPage(encoded []json.RawMessage, items any, extra []pageMember, next *string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"items":`)
	if encoded != nil {
		buf.WriteByte('[')
		for i, e := range encoded {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(e)
		}
		buf.WriteByte(']')
	} else if err := writeJSON(&buf, items); err != nil {
		return nil, err
	}
	for _, m := range extra {
		buf.WriteString(`,"` + m.name + `":`)
		if err := writeJSON(&buf, m.value); err != nil {
			return nil, err
		}
	}
	buf.WriteString(`,"next_cursor":`)
	if err := writeJSON(&buf, next); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, v any) error {
	b, err := encodeJSON(v)
	if err == nil {
		buf.Write(b)
	}
	return err
}

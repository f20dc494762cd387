package api

import (
	"encoding/json"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// Optional is a member of a JSON Merge Patch body that may be omitted but not
// null: the schema refuses null, so Huma answers 422 with the member's name.
// Declare it with `json:"name,omitzero"`.
type Optional[T any] struct{ p resources.Patch[T] }

// Nullable is a merge-patch member that may also be null, which clears it.
// In a response it is omitted when unset and written as null when null.
type Nullable[T any] struct{ p resources.Patch[T] }

// Patch returns the member as the domain's Patch.
func (o Optional[T]) Patch() resources.Patch[T] { return o.p }

// Patch returns the member as the domain's Patch.
func (o Nullable[T]) Patch() resources.Patch[T] { return o.p }

// NullOf is a set Nullable holding v, or null when v is nil.
func NullOf[T any](v *T) Nullable[T] {
	if v == nil {
		return Nullable[T]{p: resources.Patch[T]{Set: true, Null: true}}
	}
	return Nullable[T]{p: resources.Patch[T]{Set: true, Value: *v}}
}

// UnmarshalJSON records that the member was present (also for null).
func (o *Optional[T]) UnmarshalJSON(b []byte) error { return unmarshalPatch(&o.p, b) }

// UnmarshalJSON records that the member was present (also for null).
func (o *Nullable[T]) UnmarshalJSON(b []byte) error { return unmarshalPatch(&o.p, b) }

func unmarshalPatch[T any](p *resources.Patch[T], b []byte) error {
	*p = resources.Patch[T]{Set: true}
	if string(b) == "null" {
		p.Null = true
		return nil
	}
	return json.Unmarshal(b, &p.Value)
}

// MarshalJSON writes the value or null.
func (o Optional[T]) MarshalJSON() ([]byte, error) { return marshalPatch(o.p) }

// MarshalJSON writes the value or null.
func (o Nullable[T]) MarshalJSON() ([]byte, error) { return marshalPatch(o.p) }

func marshalPatch[T any](p resources.Patch[T]) ([]byte, error) {
	if !p.Set || p.Null {
		return []byte("null"), nil
	}
	return json.Marshal(p.Value)
}

// IsZero lets omitzero drop an unset member.
func (o Optional[T]) IsZero() bool { return !o.p.Set }

// IsZero lets omitzero drop an unset member.
func (o Nullable[T]) IsZero() bool { return !o.p.Set }

// Schema is T's schema.
func (o Optional[T]) Schema(r huma.Registry) *huma.Schema { return memberSchema[T](r, false) }

// Schema is T's schema, nullable.
func (o Nullable[T]) Schema(r huma.Registry) *huma.Schema { return memberSchema[T](r, true) }

// memberSchema copies T's schema (inlining an object, since Huma cannot make
// a $ref nullable) and marks it nullable when asked.
func memberSchema[T any](r huma.Registry, nullable bool) *huma.Schema {
	s := r.Schema(reflect.TypeFor[T](), true, "")
	if s.Ref != "" {
		s = r.SchemaFromRef(s.Ref)
	}
	cp := *s
	cp.Nullable = nullable
	return &cp
}

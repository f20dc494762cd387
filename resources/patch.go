package resources

// Patch is one member of a JSON Merge Patch (RFC 7396): absent (Set false),
// null (Set and Null: clear), or a value.
type Patch[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Frozen checks a frozen member: it may be sent only with its current value;
// another value is 422 immutable_field.
func Frozen[T comparable](field string, p Patch[T], current T) error {
	if p.Set && (p.Null || p.Value != current) {
		return Invalid(field, CodeImmutableField, "%s cannot change after create; send its current value or omit it", field)
	}
	return nil
}

// Apply sets *dst to the patch value when one was sent (non-nullable member;
// the schema has already refused null).
func Apply[T any](dst *T, p Patch[T]) {
	if p.Set && !p.Null {
		*dst = p.Value
	}
}

// ApplyNullable sets or clears a nullable member.
func ApplyNullable[T any](dst **T, p Patch[T]) {
	switch {
	case !p.Set:
	case p.Null:
		*dst = nil
	default:
		v := p.Value
		*dst = &v
	}
}

// CodeImmutableField refuses a change to a frozen member.
const CodeImmutableField = "immutable_field"

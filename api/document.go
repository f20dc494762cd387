package api

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// documentParams completes the parameter descriptions of a registered
// operation so that people and agents read every rule in one place: an enum
// parameter lists its values, and a list's `fields` lists the item members
// (of the item type of out, the operation's output) and the key always kept.
func documentParams(oapi *huma.OpenAPI, op Op, out reflect.Type) {
	hop := operationAt(oapi, op.Method, op.Path)
	if hop == nil {
		return
	}
	for _, p := range hop.Parameters {
		if p.Name == "fields" && p.In == "query" {
			if item := listItemType(out); item != nil {
				_, key := ItemMembers(item)
				p.Description = sentence(p.Description, "Always kept: "+strings.Join(key, ", ")+".")
				hop.Extensions[ExtItemKey] = key
			}
		}
		if p.Schema != nil && len(p.Schema.Enum) > 0 && !mentionsAll(p.Description, p.Schema.Enum) {
			p.Description = sentence(p.Description, EnumSentence(p.Schema.Enum))
		}
		if p.Schema != nil && p.Schema.Items != nil && len(p.Schema.Items.Enum) > 0 {
			p.Description = sentence(p.Description, AnyOfSentence(p.Schema.Items.Enum))
		}
	}
}

// sentence appends the sentence add to the description desc, ending desc
// with a full stop first when it has none.
func sentence(desc, add string) string {
	desc = strings.TrimSpace(desc)
	if desc != "" && !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	return strings.TrimSpace(desc + " " + add)
}

// listItemType is the item type of a list output (Body.Items []T), or nil.
func listItemType(out reflect.Type) reflect.Type {
	body, ok := out.FieldByName("Body")
	if !ok || body.Type.Kind() != reflect.Struct {
		return nil
	}
	items, ok := body.Type.FieldByName("Items")
	if !ok || items.Type.Kind() != reflect.Slice || items.Type.Elem().Kind() != reflect.Struct {
		return nil
	}
	return items.Type.Elem()
}

// EnumSentence is the sentence a parameter's description ends with to list
// the values of its enum.
func EnumSentence(values []any) string {
	return "One of: " + joinValues(values) + "."
}

// AnyOfSentence is the sentence a multi-value filter's description ends
// with: its values are comma-separated, any of those listed.
func AnyOfSentence(values []any) string {
	return "Comma-separated, any of: " + joinValues(values) + "."
}

func mentionsAll(desc string, values []any) bool {
	for _, v := range values {
		if !strings.Contains(desc, fmt.Sprint(v)) {
			return false
		}
	}
	return true
}

func joinValues(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

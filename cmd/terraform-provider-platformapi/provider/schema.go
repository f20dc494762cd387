package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// Attribute helpers for resource schemas. Names are the API's members.

// idAttr is the object's id, a decimal string kept across plans.
func idAttr() schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: "Id (a decimal string).",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

// required is a string the configuration must set.
func required(doc string) schema.StringAttribute {
	return schema.StringAttribute{Required: true, Description: doc}
}

// optional is a nullable string: leaving it out sends null (clears it).
func optional(doc string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Description: doc}
}

// defaulted is a string the server defaults when left out; leaving it out
// later keeps the current value.
func defaulted(doc string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, Description: doc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

// computed is a read-only string that may change with any update.
func computed(doc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: doc}
}

// stable is a read-only string that never changes once set.
func stable(doc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: doc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

// timestamps are created_at (stable) and updated_at.
func timestamps(m map[string]schema.Attribute) map[string]schema.Attribute {
	m["created_at"] = stable("When it was created (RFC 3339).")
	m["updated_at"] = computed("When it last changed (RFC 3339).")
	return m
}

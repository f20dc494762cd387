package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ModifyPlan enforces at plan time what the contract keeps: a change of a
// frozen member is an error; a change of a replace member replaces; and
// any plan that would archive, delete, deactivate, retire or revoke
// (destroy or replace) fails unless the provider sets allow_destroy.
func (r *genericResource) ModifyPlan(_ context.Context, req resource.ModifyPlanRequest,
	resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		return // a create
	}
	state := objectAttrs(req.State.Raw)
	if req.Plan.Raw.IsNull() {
		if r.k.verb != "" && !r.allowDestroy() {
			r.refuse(&resp.Diagnostics, state, "")
		}
		if r.k.verb == "" && r.k.removeWarning != "" {
			resp.Diagnostics.AddWarning("platformapi: this plan only forgets the "+r.k.noun, r.k.removeWarning)
		}
		return
	}
	plan := r.keepEquivalent(objectAttrs(req.Plan.Raw), state)
	if r.unchanged(plan, state) {
		plan = r.keepComputed(plan, state)
	}
	resp.Plan.Raw = tftypes.NewValue(req.Plan.Raw.Type(), plan)
	for _, name := range r.k.frozen {
		if v := plan[name]; v.IsFullyKnown() && !v.Equal(state[name]) {
			resp.Diagnostics.AddAttributeError(path.Root(name), "platformapi: "+name+" is frozen",
				fmt.Sprintf("%s of %s %q cannot change (it was %s). Replacing it is refused too: "+
					"the platform would %s it and keep it, so a new one could not take its place. "+
					"Set %s back to its current value.", name, r.k.noun, str(state[r.k.label]),
					show(state[name]), r.k.verb, name))
		}
	}
	var replaced []string
	for _, name := range r.replaceMembers() {
		if v := plan[name]; !v.IsFullyKnown() || !v.Equal(state[name]) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root(name))
			replaced = append(replaced, name)
		}
	}
	if len(replaced) > 0 && r.k.verb != "" && !r.allowDestroy() {
		r.refuse(&resp.Diagnostics, state, strings.Join(replaced, ", "))
	}
}

// unchanged reports whether the plan keeps every configurable attribute
// as it is in state (after the attribute plan modifiers: a colour that
// differs only in case is planned as in state).
func (r *genericResource) unchanged(plan, state attrs) bool {
	for name := range r.k.schema.Attributes {
		if r.configurable(name) && (!plan[name].IsFullyKnown() || !plan[name].Equal(state[name])) {
			return false
		}
	}
	return true
}

// keepEquivalent plans the state's spelling of a configured value the API
// holds as the same one (an address whose domain differs only in case, JSON
// laid out otherwise): a respelling, or a configuration meeting the
// server's spelling after an import, changes nothing, and a frozen member
// respelled so is no change of it.
func (r *genericResource) keepEquivalent(plan, state attrs) attrs {
	for name, same := range r.equivalences() {
		p, s := plan[name], state[name]
		if p.IsFullyKnown() && !p.IsNull() && s.IsKnown() && !s.IsNull() && same(str(p), str(s)) {
			plan[name] = s
		}
	}
	return plan
}

// keepComputed plans the state's values of the read-only attributes the
// framework marked unknown: a plan that changes no configurable
// attribute changes nothing the API computes either.
func (r *genericResource) keepComputed(plan, state attrs) attrs {
	out := attrs{}
	for name, v := range plan {
		out[name] = v
		if a, ok := r.k.schema.Attributes[name]; ok && a.IsComputed() && !r.configurable(name) && !v.IsKnown() {
			out[name] = state[name]
		}
	}
	return out
}

// replaceMembers are the members whose change replaces: the kind's, or
// every configurable one when the API cannot change it in place.
func (r *genericResource) replaceMembers() []string {
	if r.k.update != nil {
		return r.k.replace
	}
	var out []string
	for name := range r.k.schema.Attributes {
		if r.configurable(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (r *genericResource) allowDestroy() bool { return r.c != nil && r.c.allowDestroy }

// refuse reports the destroy switch: replacing names the members whose
// change forces the replacement ("" for a destroy).
func (r *genericResource) refuse(diags *diag.Diagnostics, state attrs, replacing string) {
	what := fmt.Sprintf("This plan would %s the %s %q (platformapi_%s, id %s)", r.k.verb, r.k.noun,
		str(state[r.k.label]), r.k.name, str(state["id"]))
	if replacing != "" {
		what += " to replace it, because " + replacing + " changed"
	}
	diags.AddError("platformapi: destroy refused: allow_destroy is not set", what+". "+
		"The platformapi provider refuses at plan time every plan that archives, deletes, deactivates, "+
		"retires or revokes something, replacements included, unless the provider block sets "+
		"allow_destroy = true. With it, the API token must also carry Allow destroy.")
}

// show is a value for a message, as JSON.
func show(v tftypes.Value) string {
	raw, _ := json.Marshal(toJSON(v))
	return string(raw)
}

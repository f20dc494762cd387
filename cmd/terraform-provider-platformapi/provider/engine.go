package provider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// defaultCreateTimeout bounds a create that waits on a 202 operation.
const defaultCreateTimeout = 10 * time.Minute

// kind describes one resource type to resourceOf, the one implementation
// of create, read, update, delete, import and plan checks every resource
// shares. Attribute names are the API's member names, so request bodies
// and state are built by name.
type kind struct {
	name   string // platformapi_<name>
	noun   string // "customer", for messages
	verb   string // what removing it does ("archive"); "" when that destroys nothing
	label  string // the attribute naming it in messages
	schema schema.Schema
	// createType and patchType are the generated request types (zero
	// values): their members are what a create or a merge patch may send,
	// and their nullable.Nullable fields are the members that take null.
	// patchType nil: update is called for every change.
	createType, patchType any
	pathMembers           []string // members a create sends in the path (in body for create)
	create                func(ctx context.Context, c *Client, body record, key string) (record, bool, error)
	read                  func(ctx context.Context, c *Client, id string) (record, error)
	update                func(ctx context.Context, c *Client, id string, patch record, ch change) (record, error)
	remove                func(ctx context.Context, c *Client, id string) error // nil: removing forgets it
	gone                  func(record) bool                                     // a record of something destroyed
	// frozen members: a change is an error at plan time; replace members:
	// a change replaces (so it is a destroy when verb is set); local
	// attributes live only in the configuration and state.
	frozen, replace, local []string
	equivalent             map[string]func(a, b string) bool // values the API normalises
	jsonText               []string                          // string attributes holding JSON text
	createTimeout          bool                              // a timeouts block with create
	removeWarning          string
	singleton              string // the one id of a singleton (import accepts only it)
}

// change is an update's planned and prior attributes.
type change struct{ plan, state attrs }

type genericResource struct {
	k *kind
	c *Client
}

var (
	_ resource.ResourceWithConfigure   = (*genericResource)(nil)
	_ resource.ResourceWithImportState = (*genericResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*genericResource)(nil)
)

func resourceOf(k *kind) func() resource.Resource {
	return func() resource.Resource { return &genericResource{k: k} }
}

// Metadata names the type platformapi_<name>.
func (r *genericResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.k.name
}

// Schema is the kind's schema.
func (r *genericResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.k.schema
}

// Configure takes the provider's client.
func (r *genericResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*Client); ok {
		r.c = c
	}
}

// ImportState imports by id (a singleton only by its one id).
func (r *genericResource) ImportState(ctx context.Context, req resource.ImportStateRequest,
	resp *resource.ImportStateResponse) {
	if r.k.singleton != "" && req.ID != r.k.singleton {
		resp.Diagnostics.AddError("platformapi: unknown "+r.k.noun+" id",
			fmt.Sprintf("There is one %s per installation: import platformapi_%s with the id %q, not %q.",
				r.k.noun, r.k.name, r.k.singleton, req.ID))
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
	r.importDefaults(ctx, resp)
}

// importDefaults gives an imported resource's local attributes with a
// default (return_value) that default: the API does not hold them, and a
// null would plan an update that changes nothing.
func (r *genericResource) importDefaults(ctx context.Context, resp *resource.ImportStateResponse) {
	for _, name := range r.k.local {
		a, ok := r.k.schema.Attributes[name].(schema.BoolAttribute)
		if !ok || a.Default == nil {
			continue
		}
		var d defaults.BoolResponse
		a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: path.Root(name)}, &d)
		resp.Diagnostics.Append(d.Diagnostics...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), d.PlanValue)...)
	}
}

// Create sends the create with its derived Idempotency-Key and stores the answer.
func (r *genericResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	plan := objectAttrs(req.Plan.Raw)
	body, err := r.body(plan, r.k.createType, nil)
	if err != nil {
		resp.Diagnostics.AddError("platformapi: invalid configuration", err.Error())
		return
	}
	for _, name := range r.k.pathMembers {
		body[name] = toJSON(plan[name])
	}
	ctx, cancel := r.createContext(ctx, req.Plan, &resp.Diagnostics)
	defer cancel()
	rec, err := r.createOnce(ctx, body)
	if err != nil {
		addError(&resp.Diagnostics, "create "+r.k.noun, err, r.attributes())
		return
	}
	addWarnings(&resp.Diagnostics, rec)
	r.setState(ctx, &resp.State, rec, plan, &resp.Diagnostics)
}

// createOnce creates, following a replayed answer whose object no longer
// exists to a superseding key (bounded).
func (r *genericResource) createOnce(ctx context.Context, body record) (record, error) {
	key := idempotencyKey("platformapi_"+r.k.name, body)
	for range 3 {
		rec, replayed, err := r.k.create(ctx, r.c, body, key)
		if err != nil || !replayed {
			return rec, err
		}
		id := fmt.Sprint(rec["id"])
		cur, err := r.k.read(ctx, r.c, id)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if err == nil && (r.k.gone == nil || !r.k.gone(cur)) {
			return rec, nil
		}
		key = supersededKey("platformapi_"+r.k.name, key, id)
	}
	return nil, fmt.Errorf("the create was answered three times with %ss that no longer exist", r.k.noun)
}

func (r *genericResource) createContext(ctx context.Context, plan tfsdk.Plan,
	diags *diag.Diagnostics) (context.Context, context.CancelFunc) {
	if !r.k.createTimeout {
		return ctx, func() {}
	}
	var tv timeouts.Value
	diags.Append(plan.GetAttribute(ctx, path.Root("timeouts"), &tv)...)
	d, ds := tv.Create(ctx, defaultCreateTimeout)
	diags.Append(ds...)
	return context.WithTimeout(ctx, d)
}

// Read refreshes the state; something gone (404, or archived, retired,
// deactivated, revoked) leaves the state.
func (r *genericResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	prior := objectAttrs(req.State.Raw)
	rec, err := r.k.read(ctx, r.c, str(prior["id"]))
	if isNotFound(err) || (err == nil && r.k.gone != nil && r.k.gone(rec)) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addError(&resp.Diagnostics, "read "+r.k.noun, err, r.attributes())
		return
	}
	r.setState(ctx, &resp.State, rec, prior, &resp.Diagnostics)
}

// Update sends a merge patch of the changed members only.
func (r *genericResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	plan, state := objectAttrs(req.Plan.Raw), objectAttrs(req.State.Raw)
	id := str(state["id"])
	var rec record
	var err error
	patch, err := r.body(plan, r.k.patchType, state)
	switch {
	case err != nil:
	case r.k.patchType != nil && len(patch) == 0:
		rec, err = r.k.read(ctx, r.c, id)
	default:
		rec, err = r.k.update(ctx, r.c, id, patch, change{plan: plan, state: state})
	}
	if err != nil {
		addError(&resp.Diagnostics, "update "+r.k.noun, err, r.attributes())
		return
	}
	addWarnings(&resp.Diagnostics, rec)
	r.setState(ctx, &resp.State, rec, plan, &resp.Diagnostics)
}

// Delete archives, deletes, deactivates, retires or revokes (the plan check
// already required allow_destroy), or only forgets.
func (r *genericResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	state := objectAttrs(req.State.Raw)
	if r.k.verb != "" && !r.c.allowDestroy {
		r.refuse(&resp.Diagnostics, state, "")
		return
	}
	if r.k.removeWarning != "" {
		resp.Diagnostics.AddWarning("platformapi: "+r.k.noun+" left as it is", r.k.removeWarning)
	}
	if r.k.remove == nil {
		return
	}
	if err := r.k.remove(ctx, r.c, str(state["id"])); err != nil && !isNotFound(err) {
		addError(&resp.Diagnostics, r.k.verb+" "+r.k.noun, err, r.attributes())
	}
}

func (r *genericResource) configured(diags *diag.Diagnostics) bool {
	if r.c == nil {
		diags.AddError("platformapi: provider not configured",
			"base_url and token must be known before this resource can be managed.")
	}
	return r.c != nil
}

// attributes are the schema's attribute names.
func (r *genericResource) attributes() map[string]bool {
	out := map[string]bool{}
	for name := range r.k.schema.Attributes {
		out[name] = true
	}
	return out
}

// configurable reports whether the configuration sets the attribute.
func (r *genericResource) configurable(name string) bool {
	a, ok := r.k.schema.Attributes[name]
	return ok && (a.IsRequired() || a.IsOptional())
}

// body is the request object of the members of typ that the configuration
// sets: all known, non-null ones for a create (prior nil); for a merge
// patch only those that differ from prior, null only where typ allows it.
func (r *genericResource) body(plan attrs, typ any, prior attrs) (record, error) {
	out := record{}
	if typ == nil {
		return out, nil
	}
	for name, nullable := range members(typ) {
		v, ok := plan[name]
		if !ok || !r.configurable(name) || !v.IsFullyKnown() {
			continue
		}
		if prior != nil && v.Equal(prior[name]) {
			continue
		}
		if v.IsNull() {
			if prior != nil && nullable {
				out[name] = nil
			}
			continue
		}
		jv := toJSON(v)
		if slices.Contains(r.k.jsonText, name) {
			var err error
			if jv, err = jsonText(v); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		out[name] = jv
	}
	return out, nil
}

// setState stores rec; local attributes come from prior, and where the API
// normalised a value equivalent to prior's, prior's spelling stays.
func (r *genericResource) setState(ctx context.Context, st *tfsdk.State, rec record, prior attrs,
	diags *diag.Diagnostics) {
	t := r.k.schema.Type().TerraformType(ctx).(tftypes.Object)
	keep := attrs{}
	for _, name := range r.k.local {
		keep[name] = prior[name]
	}
	v, err := objectFromJSON(t, rec, keep)
	if err != nil {
		diags.AddError("platformapi: unexpected answer for "+r.k.noun, err.Error())
		return
	}
	m := objectAttrs(v)
	for name, same := range r.equivalences() {
		p, n := prior[name], m[name]
		if p.IsKnown() && !p.IsNull() && !n.IsNull() && same(str(p), str(n)) {
			m[name] = p
		}
	}
	st.Raw = tftypes.NewValue(t, m)
}

func (r *genericResource) equivalences() map[string]func(a, b string) bool {
	out := map[string]func(a, b string) bool{}
	for name, f := range r.k.equivalent {
		out[name] = f
	}
	for _, name := range r.k.jsonText {
		out[name] = sameJSON
	}
	return out
}

// str is a string value's text ("" when null or unknown).
func str(v tftypes.Value) string {
	var s string
	if v.IsKnown() && !v.IsNull() {
		_ = v.As(&s)
	}
	return s
}

package api

import (
	"cmp"
	"context"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// Op declares one operation: everything the REST endpoint, its OpenAPI entry,
// its MCP tool (for a GET) and the shared middleware need to know.
type Op struct {
	ID        string // kebab-case OperationID; also the MCP tool name
	Toolset   string // MCP toolset (one of Toolsets()); every GET needs one to become a tool
	OpenWorld bool   // reaches outside the platform (code host, live monitoring): MCP openWorldHint
	// Public serves the operation without a token (within the API switch and
	// the network gate): no authentication, rate limit or permission. A
	// public GET is not an MCP tool; what it serves is an MCP resource.
	Public      bool
	Method      string   //
	Path        string   // relative to /api/v1
	Summary     string   //
	Description string   //
	Tags        []string //
	// Notes is the README endpoint table's notes: what a reader of the table
	// needs beyond the method, path, summary and permission (Markdown on one
	// line; the table escapes a "|"). Only the README shows it: never the
	// OpenAPI document nor an MCP tool.
	Notes       string
	Permissions []string // keys of which any one suffices; none: any valid token
	Destroy     bool     // archives, deletes, deactivates or retires: needs Allow destroy
	Idempotent  bool     // accepts Idempotency-Key (creates or starts something)
	Status      int      // success status (default 200)
	Errors      []int    // statuses specific to the operation
	// Feature is the licence feature the operation's writes need
	// (resources.FeatureAI, FeatureBrand); "" for none.
	Feature string
	// Limit names the licence limit a create counts against
	// (resources.LimitCustomers); the store checks it under a lock.
	Limit string
	// LicenceExempt keeps a write reachable whatever the licence state
	// (installing a licence).
	LicenceExempt bool
	// MaxBodyBytes bounds the request body (0: Huma's default, 1 MiB for
	// JSON bodies); a larger body is 413 body_too_large.
	MaxBodyBytes int64
	// BodyTypes are the media types of a raw request body (RawBody), and
	// ResultTypes those of a raw success answer (not JSON: such a GET is no
	// MCP tool), each documented as raw bytes.
	BodyTypes, ResultTypes []string
	// Deprecated marks the operation deprecated: OpenAPI deprecated: true,
	// headers Deprecation and Sunset on every answer. nil: not deprecated.
	Deprecated *Deprecation
}

// MCP toolsets: each operation declares the one it belongs to, so an agent
// can ask for only the tools of the areas it works in.
const (
	ToolsetIdentity = "identity" // whoami, meta, permissions, API tokens, service accounts
	ToolsetTenancy  = "tenancy"  // customers, tenants, users
	ToolsetProjects = "projects" // projects and long-running operations
	ToolsetReleases = "releases" // promotions, release state, PROD data lock
	ToolsetAI       = "ai"       // model catalogue, AI nodes, node caches, AI gateway
	ToolsetAudit    = "audit"    // the audit log
	ToolsetLicence  = "licence"  // the licence
	ToolsetBrand    = "brand"    // the brand and its assets
)

// Toolsets returns every toolset name, sorted.
func Toolsets() []string {
	return []string{ToolsetAI, ToolsetAudit, ToolsetBrand, ToolsetIdentity, ToolsetLicence, ToolsetProjects,
		ToolsetReleases, ToolsetTenancy}
}

// OpenAPI extensions that carry an Op's MCP facts into the document the
// MCP tools are derived from.
const (
	ExtToolset   = "x-toolset"    // the Op's Toolset
	ExtOpenWorld = "x-open-world" // true when the Op reaches outside the platform
	ExtItemKey   = "x-item-key"   // a list's item members that `fields` always keeps
	ExtPublic    = "x-public"     // true when the Op needs no token (never an MCP tool)
)

// metaKey is the huma.Operation.Metadata key holding the Op.
const metaKey = "platformapi.op"

// commonErrors are the statuses every operation can answer.
var commonErrors = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusServiceUnavailable,
}

// publicErrors are the statuses every public operation can answer: a
// malformed query string (400 invalid_parameter) and the server's faults.
var publicErrors = []int{
	http.StatusBadRequest, http.StatusInternalServerError, http.StatusServiceUnavailable,
}

// bodyErrors are the statuses of reading a request body (BodyReadError):
// 408 request_timeout when it stalls, 413 body_too_large past its limit.
var bodyErrors = []int{http.StatusRequestTimeout, http.StatusRequestEntityTooLarge}

// hasBody reports whether Huma reads a request body into input type t (a
// Body or RawBody member, as huma.Register looks them up).
func hasBody(t reflect.Type) bool {
	_, body := t.FieldByName("Body")
	_, raw := t.FieldByName("RawBody")
	return body || raw
}

// Register declares op with its typed handler on the API.
// A member of I or O tagged `deprecated:"true"` is deprecated in the
// OpenAPI document (parameters included).
func Register[I, O any](api huma.API, op Op, h func(context.Context, *I) (*O, error)) {
	if op.Deprecated != nil {
		op.Deprecated.check(op.ID)
	}
	huma.Register(api, op.huma(hasBody(reflect.TypeFor[I]())), h)
	markDeprecatedParams[I](api, op)
	op.documentRawTypes(api)
	documentParams(api.OpenAPI(), op, reflect.TypeFor[O]())
}

func (op Op) huma(body bool) huma.Operation {
	errs, params := op.errorsAndParams(body)
	return huma.Operation{
		OperationID: op.ID, Method: op.Method, Path: op.Path,
		Summary: op.Summary, Description: op.describe(), Tags: op.Tags,
		DefaultStatus: op.Status, Errors: errs, Security: op.security(),
		Extensions: op.extensions(), Metadata: map[string]any{metaKey: op}, Parameters: params,
		Deprecated: op.Deprecated != nil, MaxBodyBytes: op.MaxBodyBytes,
	}
}

// errorsAndParams are the statuses the operation documents (the common
// ones, its own, those of reading its body if it takes one, and those of
// Idempotency-Key) and its declared header parameters (Idempotency-Key).
func (op Op) errorsAndParams(body bool) ([]int, []*huma.Param) {
	errs := slices.Concat(commonErrors, op.Errors)
	if op.Public {
		errs = slices.Concat(publicErrors, op.Errors)
	}
	if body {
		errs = append(errs, bodyErrors...)
	}
	var params []*huma.Param
	if op.Idempotent {
		errs = append(errs, http.StatusBadRequest, http.StatusConflict)
		params = append(params, &huma.Param{Name: IdempotencyKeyHeader, In: "header",
			Description: "Makes a retry safe: the same key with the same request within 24 hours replays the first answer " +
				"(header Idempotent-Replayed: true); another request with the key is 409 idempotency_key_reused; " +
				"while the first still runs, 429 idempotency_request_in_progress. Scoped to the calling account.",
			Schema: &huma.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(255), Pattern: "^[!-~]+$"}})
	}
	slices.Sort(errs)
	return slices.Compact(errs), params
}

// security is the operation's OpenAPI security: a bearer token holding any
// one of its permission keys (alternatives are OR-ed), any bearer token
// when it names none, nothing for a public operation.
func (op Op) security() []map[string][]string {
	if op.Public {
		return []map[string][]string{}
	}
	if len(op.Permissions) == 0 {
		return []map[string][]string{{"bearer": {}}}
	}
	security := make([]map[string][]string, 0, len(op.Permissions))
	for _, k := range op.Permissions {
		security = append(security, map[string][]string{"bearer": {k}})
	}
	return security
}

// extensions are the operation's x- members: permissions, public, destroy,
// licence feature and limit, sunset, toolset, open world.
func (op Op) extensions() map[string]any {
	ext := map[string]any{"x-permissions": permissionList(op.Permissions)}
	set := func(on bool, key string, v any) {
		if on {
			ext[key] = v
		}
	}
	set(op.Public, ExtPublic, true)
	set(op.Destroy, "x-destroy", true)
	set(op.Feature != "", "x-licence-feature", op.Feature)
	set(op.Limit != "", "x-licence-limit", op.Limit)
	if op.Deprecated != nil {
		ext["x-sunset"] = op.Deprecated.Sunset.UTC().Format(time.RFC3339)
	}
	set(op.Toolset != "", ExtToolset, op.Toolset)
	set(op.OpenWorld, ExtOpenWorld, true)
	return ext
}

// describe appends the permission and destroy rules to the description, so
// people and agents reading the contract see them.
func (op Op) describe() string {
	d := op.Description
	if d != "" {
		d += "\n\n"
	}
	if op.Public {
		d += "Permission: none; no token needed."
	} else if len(op.Permissions) == 0 {
		d += "Permission: any valid API token."
	} else {
		d += "Permission: any one of `" + strings.Join(op.Permissions, "`, `") + "`."
	}
	if op.Destroy {
		d += " Destroy: the token needs Allow destroy, else 403 `destroy_not_allowed`."
	}
	d += op.describeLicence()
	if op.Deprecated != nil {
		d += " " + op.Deprecated.describe()
	}
	return d
}

func permissionList(keys []string) []string {
	if keys == nil {
		return []string{}
	}
	return keys
}

// documentRawTypes lists BodyTypes and ResultTypes as binary content of the
// registered operation (the same *huma.Operation the middleware reads, so
// the content-type check accepts exactly these).
func (op Op) documentRawTypes(api huma.API) {
	hop := operationAt(api.OpenAPI(), op.Method, op.Path)
	if hop == nil {
		return
	}
	binary := func(types []string) map[string]*huma.MediaType {
		m := map[string]*huma.MediaType{}
		for _, t := range types {
			m[t] = &huma.MediaType{} // OpenAPI 3.1: no schema is raw bytes of that type
		}
		return m
	}
	if len(op.BodyTypes) > 0 && hop.RequestBody != nil {
		hop.RequestBody.Content = binary(op.BodyTypes)
	}
	status := strconv.Itoa(cmp.Or(op.Status, http.StatusOK))
	if r := hop.Responses[status]; len(op.ResultTypes) > 0 && r != nil {
		r.Content = binary(op.ResultTypes)
	}
}

// describeLicence states what the licence must allow for the operation.
func (op Op) describeLicence() string {
	switch {
	case op.LicenceExempt:
		return " Licence: reachable whatever the licence state."
	case op.Method == http.MethodGet:
		return ""
	}
	d := " Licence: needs a licence that is valid or in grace (403 `licence_required`, `licence_locked`)"
	if op.Feature != "" {
		d += " and includes the feature `" + op.Feature + "` (403 `licence_restricted`)"
	}
	if op.Limit != "" {
		d += "; a create beyond the licence's `" + op.Limit + "` limit is 403 `licence_restricted`"
	}
	return d + "."
}

// opOf returns the Op declared for a Huma operation.
// Declared returns the declaration an operation was registered with by
// Register, for adapters that derive from it (the MCP tools); false for an
// operation registered otherwise.
func Declared(hop *huma.Operation) (Op, bool) { return opOf(hop) }

func opOf(hop *huma.Operation) (Op, bool) {
	op, ok := hop.Metadata[metaKey].(Op)
	return op, ok
}

func ptr[T any](v T) *T { return &v }

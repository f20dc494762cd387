package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Op declares one operation: everything the REST endpoint, its OpenAPI entry,
// its MCP tool (for a GET) and the shared middleware need to know.
type Op struct {
	ID          string   // kebab-case OperationID; also the MCP tool name
	Method      string   //
	Path        string   // relative to /api/v1
	Summary     string   //
	Description string   //
	Tags        []string //
	Permissions []string // keys of which any one suffices; none: any valid token
	Destroy     bool     // archives, deletes, deactivates or retires: needs Allow destroy
	Idempotent  bool     // accepts Idempotency-Key (creates or starts something)
	Status      int      // success status (default 200)
	Errors      []int    // statuses specific to the operation
}

// metaKey is the huma.Operation.Metadata key holding the Op.
const metaKey = "platformapi.op"

// commonErrors are the statuses every operation can answer.
var commonErrors = []int{
	http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusServiceUnavailable,
}

// Register declares op with its typed handler on the API.
func Register[I, O any](api huma.API, op Op, h func(context.Context, *I) (*O, error)) {
	huma.Register(api, op.huma(), h)
}

func (op Op) huma() huma.Operation {
	errs := slices.Concat(commonErrors, op.Errors)
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
	errs = slices.Compact(errs)
	security := []map[string][]string{{"bearer": {}}}
	if len(op.Permissions) > 0 {
		security = nil
		for _, k := range op.Permissions { // OpenAPI: alternatives are OR-ed
			security = append(security, map[string][]string{"bearer": {k}})
		}
	}
	ext := map[string]any{"x-permissions": permissionList(op.Permissions)}
	if op.Destroy {
		ext["x-destroy"] = true
	}
	return huma.Operation{
		OperationID: op.ID, Method: op.Method, Path: op.Path,
		Summary: op.Summary, Description: op.describe(), Tags: op.Tags,
		DefaultStatus: op.Status, Errors: errs, Security: security,
		Extensions: ext, Metadata: map[string]any{metaKey: op}, Parameters: params,
	}
}

// describe appends the permission and destroy rules to the description, so
// people and agents reading the contract see them.
func (op Op) describe() string {
	d := op.Description
	if d != "" {
		d += "\n\n"
	}
	if len(op.Permissions) == 0 {
		d += "Permission: any valid API token."
	} else {
		d += "Permission: any one of `" + strings.Join(op.Permissions, "`, `") + "`."
	}
	if op.Destroy {
		d += " Destroy: the token needs Allow destroy, else 403 `destroy_not_allowed`."
	}
	return d
}

func permissionList(keys []string) []string {
	if keys == nil {
		return []string{}
	}
	return keys
}

// opOf returns the Op declared for a Huma operation.
func opOf(hop *huma.Operation) (Op, bool) {
	op, ok := hop.Metadata[metaKey].(Op)
	return op, ok
}

func ptr[T any](v T) *T { return &v }

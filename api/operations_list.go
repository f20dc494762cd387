package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"platformapi/resources"
)

// ListOperationsInput filters the list of operations of every kind.
type ListOperationsInput struct {
	ListParams
	Kind       []string  `query:"kind" enum:"release_promotion,data_copy,project_provision,node_cache_copy,node_cache_remove"`
	Status     []string  `query:"status" enum:"pending,running,succeeded,failed,awaiting_approval,awaiting_operator"`
	TargetType []string  `query:"target_type" enum:"project,node_cache"`
	TargetID   string    `query:"target_id" maxLength:"300" doc:"Exact: a project id, or hostname/model_id"`
	Since      time.Time `query:"since" maxLength:"40" doc:"Created at or after this moment (RFC 3339)"`
}

// operationFilters are what a cursor of the list is bound to: the filters
// asked for (not the kinds the token may see, which can change in between).
type operationFilters struct {
	Kind       []string   `json:"kind,omitempty"`
	Status     []string   `json:"status,omitempty"`
	TargetType []string   `json:"target_type,omitempty"`
	TargetID   string     `json:"target_id,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
}

func (s *Server) registerListOperations() {
	Register(s.api, Op{ID: "list-operations", Toolset: ToolsetProjects, Method: http.MethodGet,
		Path: "/operations", Tags: []string{"Operations"}, Summary: "List operations of every kind",
		Permissions: operationReaders, Errors: []int{http.StatusBadRequest},
		Description: "Long-running work of every kind (provisioning, node cache copies, promotions as " +
			"release:<id>), newest first: status=failed&limit=1 is the latest failure. Only kinds the " +
			"token could poll (release:<id> needs a releases read key).",
		Notes: "every kind (`release:<id>` with a releases read key); filters `kind`, `status`, " +
			"`target_type`, `target_id`, `since`; newest first",
	}, s.listOperations)
}

func (s *Server) listOperations(ctx context.Context, in *ListOperationsInput) (
	*ListOutput[Operation], error) {
	kinds, err := visibleKinds(CredentialFrom(ctx), in.Kind)
	if err != nil {
		return nil, err
	}
	asked := operationFilters{Kind: in.Kind, Status: in.Status, TargetType: in.TargetType,
		TargetID: in.TargetID, Since: timePtr(in.Since)}
	f := resources.OperationFilter{Kinds: kinds, Status: asked.Status, TargetType: asked.TargetType,
		TargetID: asked.TargetID, Since: asked.Since}
	return listPage(ctx, s, "operations", asked, in.page(),
		func(q resources.PageQuery) (resources.Page[resources.Operation], error) {
			return s.svc.Operations.ListOperations(ctx, f, q)
		}, operationView)
}

// visibleKinds are the operation kinds the caller could poll, narrowed to
// those asked for when any; asking for a kind the caller could not poll is
// 403 forbidden naming that kind's keys, as polling one would be.
func visibleKinds(c *resources.Credential, asked []string) ([]string, error) {
	var out []string
	for _, k := range resources.OperationKinds {
		if len(asked) > 0 && !slices.Contains(asked, k) {
			continue
		}
		if err := permitted(c, operationKeys(k)); err != nil && len(asked) > 0 {
			return nil, err
		} else if err == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

package api

import (
	"context"
	"net/http"

	"platformapi/resources"
)

// Inputs and outputs of the release operations.
type (
	PromotionInput struct {
		ProjectIDInput
		Body struct {
			Component string  `json:"component" maxLength:"40" doc:"app-api or www; one the project does not enable (an empty one too) is 422 component_not_enabled"`
			TargetEnv string  `json:"target_env" enum:"dev,uat,prod"`
			Version   *string `json:"version,omitempty" nullable:"true" pattern:"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$" doc:"Required for dev; for uat and prod, if given, must equal what the environment below runs"`
		}
	}
	// ReleaseFilterParams are the filters of both lists of release operations.
	ReleaseFilterParams struct {
		Status    []string `query:"status" enum:"pending,awaiting_approval,awaiting_operator,running,succeeded,failed"`
		TargetEnv []string `query:"target_env" enum:"sandbox,dev,uat,prod"`
		Component []string `query:"component" enum:"app-api,www" doc:"Excludes data copies, which have no component"`
	}
	ListReleasesInput struct {
		ProjectIDInput
		ListParams
		ReleaseFilterParams
	}
	ListFleetReleasesInput struct {
		ListParams
		ReleaseFilterParams
		ProjectID  string `query:"project_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Only this project's"`
		CustomerID string `query:"customer_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Only its projects'"`
	}
	ReleaseIDInput struct {
		ReleaseOperationID string `path:"release_operation_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Release operation id (list-fleet-release-operations lists them)"`
	}
	ProdLockInput struct {
		ProjectIDInput
		Body struct {
			Locked        bool    `json:"locked" doc:"true sets the lock, false releases it"`
			ConfirmUnlock *string `json:"confirm_unlock,omitempty" nullable:"true" maxLength:"64" doc:"To unlock: the project's short name exactly"`
		}
	}
	ReleaseOutput   struct{ Body ReleaseOperation }
	ProdLockOutput  struct{ Body ProdLock }
	ReleaseStateOut struct{ Body ReleaseState }
)

var (
	releasesRead  = []string{resources.PermReleasesRead, resources.PermReleasesWrite}
	releasesWrite = []string{resources.PermReleasesWrite}
)

func (s *Server) registerReleases() {
	tags := []string{"Releases"}
	Register(s.api, Op{ID: "request-release-promotion", Toolset: ToolsetReleases, Method: http.MethodPost, Path: "/projects/{project_id}/release-promotions",
		Tags: tags, Status: http.StatusAccepted, Summary: "Request a release promotion", Permissions: releasesWrite, Idempotent: true,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "202 with the operation release:<id>. dev needs a version; uat and prod promote what the environment " +
			"below last reported. dev and uat start at once; prod waits for a person's decision in the portal. Send an " +
			"Idempotency-Key so a retry never books a second deployment. 409 project_retired; 422 vm_projects_unsupported, " +
			"component_not_enabled, version_not_at_source, version_required.",
		Notes: "202 operation `release:<id>`; `Idempotency-Key`; dev needs `version`; uat/prod " +
			"take what the environment below reported; prod awaits a person's approval in the " +
			"portal",
	}, s.requestPromotion)
	Register(s.api, Op{ID: "list-release-operations", Toolset: ToolsetReleases, Method: http.MethodGet, Path: "/projects/{project_id}/release-operations",
		Tags: tags, Summary: "List a project's release operations", Permissions: releasesRead,
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Newest first; includes data copies booked in the portal (a component filter excludes them).",
		Notes: "filters `status`, `target_env`, `component`; newest first; " +
			"includes data copies",
	}, s.listReleases)
	s.registerFleetReleases(tags)
	Register(s.api, Op{ID: "get-release-operation", Toolset: ToolsetReleases, Method: http.MethodGet, Path: "/release-operations/{release_operation_id}",
		Tags: tags, Summary: "Read a release operation", Permissions: releasesRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One promotion or data copy: its project, environment, version, status, who asked and who decided.",
		Notes:       "404 `release_operation_not_found`",
	}, func(ctx context.Context, in *ReleaseIDInput) (*ReleaseOutput, error) {
		r, err := s.svc.Releases.GetReleaseOperation(ctx, parseID(in.ReleaseOperationID))
		if err != nil {
			return nil, err
		}
		return &ReleaseOutput{Body: releaseView(*r)}, nil
	})
	s.registerReleaseState(tags)
}

// registerFleetReleases declares the release operations of every project.
func (s *Server) registerFleetReleases(tags []string) {
	Register(s.api, Op{ID: "list-fleet-release-operations", Toolset: ToolsetReleases, Method: http.MethodGet,
		Path: "/release-operations", Tags: tags, Summary: "List release operations of every project",
		Permissions: releasesRead, Errors: []int{http.StatusBadRequest},
		Description: "Promotions and data copies of every project, newest first, each with its project's " +
			"short name and customer. status=awaiting_approval: what waits for a person; component excludes data copies.",
		Notes: "every project; filters `status`, `target_env`, `component`, `project_id`, " +
			"`customer_id`; newest first",
	}, s.listFleetReleases)
}

func (s *Server) registerReleaseState(tags []string) {
	Register(s.api, Op{ID: "get-release-state", Toolset: ToolsetReleases, Method: http.MethodGet, Path: "/projects/{project_id}/release-state",
		Tags: tags, Summary: "What a project runs where", Permissions: releasesRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Per environment and component the version a pipeline last reported, when and by whom (not probed " +
			"live); the PROD data lock; the operations still open.",
		Notes: "per environment and component the last reported version, when and by whom; the " +
			"PROD data lock; open operations",
	}, func(ctx context.Context, in *ProjectIDInput) (*ReleaseStateOut, error) {
		st, err := s.svc.Releases.ReleaseState(ctx, parseID(in.ProjectID))
		if err != nil {
			return nil, err
		}
		return &ReleaseStateOut{Body: releaseStateView(*st)}, nil
	})
	Register(s.api, Op{ID: "get-prod-lock", Toolset: ToolsetReleases, Method: http.MethodGet, Path: "/projects/{project_id}/prod-lock",
		Tags: tags, Summary: "Read the PROD data lock", Permissions: releasesRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Whether data copies into a project's PROD are locked, since when and by whom (list-projects prod_locked=true finds every locked one).",
	}, func(ctx context.Context, in *ProjectIDInput) (*ProdLockOutput, error) {
		l, err := s.svc.Releases.GetProdLock(ctx, parseID(in.ProjectID))
		if err != nil {
			return nil, err
		}
		return &ProdLockOutput{Body: prodLockView(*l)}, nil
	})
	Register(s.api, Op{ID: "set-prod-lock", Toolset: ToolsetReleases, Method: http.MethodPut, Path: "/projects/{project_id}/prod-lock",
		Tags: tags, Summary: "Set or release the PROD data lock", Permissions: releasesWrite,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Unlocking needs confirm_unlock equal to the project's short name (422 unlock_not_confirmed). A PUT " +
			"to the current state keeps its time and author. 409 project_retired.",
		Notes: "`{locked, confirm_unlock}`; unlocking needs the project's short name (422 " +
			"`unlock_not_confirmed`)",
	}, func(ctx context.Context, in *ProdLockInput) (*ProdLockOutput, error) {
		l, err := s.svc.Releases.SetProdLock(ctx, ActorFrom(ctx), parseID(in.ProjectID), in.Body.Locked, in.Body.ConfirmUnlock)
		if err != nil {
			return nil, err
		}
		return &ProdLockOutput{Body: prodLockView(l)}, nil
	})
}

// requesters are the people a token request counts as: the token's owner
// (when a person) and whoever minted the token.
func requesters(ctx context.Context) []int64 {
	c := CredentialFrom(ctx)
	out := []int64{c.Token.MintedBy}
	if c.Owner.Kind == resources.PrincipalUser && c.Owner.ID != c.Token.MintedBy {
		out = append(out, c.Owner.ID)
	}
	return out
}

func (s *Server) requestPromotion(ctx context.Context, in *PromotionInput) (*AcceptedOutput, error) {
	r, err := s.svc.Releases.RequestPromotion(ctx, ActorFrom(ctx), requesters(ctx), parseID(in.ProjectID),
		resources.PromotionRequest{Component: in.Body.Component, TargetEnv: in.Body.TargetEnv, Version: in.Body.Version}, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return accepted(r.Operation()), nil
}

// filter is the release filter the parameters ask for.
func (p ReleaseFilterParams) filter() resources.ReleaseFilter {
	return resources.ReleaseFilter{Status: p.Status, TargetEnv: p.TargetEnv, Component: p.Component}
}

func (s *Server) listReleases(ctx context.Context, in *ListReleasesInput) (*ListOutput[ReleaseOperation], error) {
	f := in.filter()
	pid := parseID(in.ProjectID)
	if _, err := s.svc.Projects.GetProject(ctx, pid); err != nil { // 404 before any cursor check
		return nil, err
	}
	return listPage(ctx, s, "release-operations:"+in.ProjectID, f, in.page(),
		func(q resources.PageQuery) (resources.Page[resources.ReleaseOperation], error) {
			return s.svc.Releases.ListReleaseOperations(ctx, pid, f, q)
		}, releaseView)
}

func (s *Server) listFleetReleases(ctx context.Context, in *ListFleetReleasesInput) (
	*ListOutput[ReleaseOperation], error) {
	f := in.filter()
	f.ProjectID, f.CustomerID = parseID(in.ProjectID), parseID(in.CustomerID)
	return listPage(ctx, s, "release-operations", f, in.page(),
		func(q resources.PageQuery) (resources.Page[resources.ReleaseOperation], error) {
			return s.svc.Releases.ListFleetReleaseOperations(ctx, f, q)
		}, releaseView)
}

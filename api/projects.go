package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// Project is a project as the API shows it.
type Project struct {
	ID         string    `json:"id" example:"12"`
	CustomerID string    `json:"customer_id"`
	TenantID   string    `json:"tenant_id"`
	ShortName  string    `json:"short_name" example:"SHOP"`
	Name       string    `json:"name" example:"Web shop"`
	Kind       string    `json:"kind" enum:"cluster,vm"`
	Components []string  `json:"components" doc:"Enabled components: app-api, www"`
	Domain     *string   `json:"domain" nullable:"true"`
	Status     string    `json:"status" doc:"provisioning, active or retired, …"`
	Platform   bool      `json:"platform" doc:"The platform's own project: read-only"`
	ProdLocked bool      `json:"prod_locked" doc:"The PROD data lock is set (get-prod-lock: who, when)"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ProjectCreate is the body of POST /projects.
type ProjectCreate struct {
	CustomerID string   `json:"customer_id" pattern:"^[1-9][0-9]{0,8}$"`
	TenantID   string   `json:"tenant_id,omitempty" pattern:"^[1-9][0-9]{0,17}$" doc:"Default: the customer's primary tenant"`
	ShortName  string   `json:"short_name" minLength:"2" maxLength:"16" pattern:"^[A-Z][A-Z0-9]{1,15}$" doc:"Unique forever; frozen"`
	Name       string   `json:"name" minLength:"3" maxLength:"80"`
	Kind       string   `json:"kind" enum:"cluster,vm" doc:"Frozen"`
	Components []string `json:"components" maxItems:"2" uniqueItems:"true" enum:"app-api,www"`
	Domain     *string  `json:"domain,omitempty" nullable:"true" minLength:"3" maxLength:"253" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$" doc:"Unique forever"`
}

// ProjectPatch is the merge-patch body of PATCH /projects/{id}.
type ProjectPatch struct {
	Name       Optional[string]   `json:"name,omitzero" minLength:"3" maxLength:"80"`
	Components Optional[[]string] `json:"components,omitzero" maxItems:"2" uniqueItems:"true" enum:"app-api,www"`
	Domain     Nullable[string]   `json:"domain,omitzero" minLength:"3" maxLength:"253" pattern:"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$" doc:"Unique forever; null clears it"`
	ShortName  Optional[string]   `json:"short_name,omitzero" maxLength:"16" doc:"Frozen"`
	Kind       Optional[string]   `json:"kind,omitzero" maxLength:"8" doc:"Frozen"`
	CustomerID Optional[string]   `json:"customer_id,omitzero" maxLength:"9" doc:"Frozen"`
	TenantID   Optional[string]   `json:"tenant_id,omitzero" maxLength:"18" doc:"Frozen"`
}

func (p ProjectPatch) domain() resources.ProjectPatch {
	return resources.ProjectPatch{Name: p.Name.Patch(), Components: p.Components.Patch(), Domain: p.Domain.Patch(),
		ShortName: p.ShortName.Patch(), Kind: p.Kind.Patch(), CustomerID: idPatch(p.CustomerID), TenantID: idPatch(p.TenantID)}
}

// idPatch reads a frozen id member sent as a string.
func idPatch(o Optional[string]) resources.Patch[int64] {
	p := o.Patch()
	return resources.Patch[int64]{Set: p.Set, Null: p.Null, Value: parseID(p.Value)}
}

func projectView(p resources.Project) Project {
	return Project{ID: formatID(p.ID), CustomerID: formatID(p.CustomerID), TenantID: formatID(p.TenantID),
		ShortName: p.ShortName, Name: p.Name, Kind: p.Kind, Components: nonNil(p.Components), Domain: p.Domain,
		Status: p.Status, Platform: p.Platform, ProdLocked: p.ProdLocked, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
}

// Inputs and outputs of the project operations.
type (
	ListProjectsInput struct {
		ListParams
		CustomerID string   `query:"customer_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Only this customer's projects"`
		TenantID   string   `query:"tenant_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Only this tenant's projects"`
		Status     []string `query:"status" enum:"provisioning,active,retired" doc:"Project status"`
		Kind       []string `query:"kind" enum:"cluster,vm" doc:"Project kind"`
		// CustomerStatus answers "what projects do suspended customers have" in one call.
		CustomerStatus []string   `query:"customer_status" enum:"active,suspended,archived" doc:"Only projects of customers in this status"`
		ProdLocked     boolFilter `query:"prod_locked" doc:"Only projects whose PROD data lock is (true) or is not (false) set"`
	}
	ProjectIDInput struct {
		ProjectID string `path:"project_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Project id"`
	}
	CreateProjectInput struct {
		Body ProjectCreate
	}
	PatchProjectInput struct {
		ProjectIDInput
		Body ProjectPatch `contentType:"application/merge-patch+json"`
	}
	ProjectOutput struct {
		Body Project
	}
)

var (
	projectsRead  = []string{resources.PermProjectsRead, resources.PermProjectsWrite}
	projectsWrite = []string{resources.PermProjectsWrite}
)

func (s *Server) registerProjects() {
	tags := []string{"Projects"}
	Register(s.api, Op{ID: "list-projects", Toolset: ToolsetProjects, Method: http.MethodGet, Path: "/projects", Tags: tags,
		Summary: "List projects", Permissions: projectsRead, Errors: []int{http.StatusBadRequest},
		Description: "Projects in id order, retired included; filters are exact and combine (customer_status: the " +
			"status of the project's customer; prod_locked: the PROD data lock).",
		Notes: "filters `customer_id`, `tenant_id`, `status`, `kind`, `customer_status` (the " +
			"customer's status), `prod_locked`",
	}, s.listProjects)
	Register(s.api, Op{ID: "create-project", Toolset: ToolsetProjects, Method: http.MethodPost, Path: "/projects", Tags: tags, Status: http.StatusAccepted,
		Summary: "Create a project (provisioned in the background)", Permissions: projectsWrite, Idempotent: true,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Answers 202 with the provisioning operation (Location: /api/v1/operations/{id}); the project is " +
			"provisioning until the operation succeeds, then active. 404 customer_not_found; 409 customer_archived, " +
			"project_short_name_taken, domain_taken; 422 tenant_not_of_customer.",
		Notes: "202 + operation + `Location`; `Idempotency-Key`; provisioning runs in the " +
			"background (provisioning → active); 409 `customer_archived`, " +
			"`project_short_name_taken`, `domain_taken`",
	}, s.createProject)
	s.registerProject(tags)
}

// registerProject declares the operations on one project.
func (s *Server) registerProject(tags []string) {
	Register(s.api, Op{ID: "get-project", Toolset: ToolsetProjects, Method: http.MethodGet, Path: "/projects/{project_id}", Tags: tags,
		Summary: "Read a project", Permissions: projectsRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One project's customer, tenant, kind, components, domain, status and PROD data lock.",
		Notes:       "404 `project_not_found`",
	}, func(ctx context.Context, in *ProjectIDInput) (*ProjectOutput, error) {
		p, err := s.svc.Projects.GetProject(ctx, parseID(in.ProjectID))
		if err != nil {
			return nil, err
		}
		return &ProjectOutput{Body: projectView(*p)}, nil
	})
	Register(s.api, Op{ID: "patch-project", Toolset: ToolsetProjects, Method: http.MethodPatch, Path: "/projects/{project_id}", Tags: tags,
		Summary: "Change a project (JSON Merge Patch)", Permissions: projectsWrite,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "name, components and domain (nullable) change; short_name, kind, customer_id, tenant_id are frozen. " +
			"409 project_read_only (the platform's own), project_retired.",
		Notes: "name, components, domain; platform projects 409 `project_read_only`; retired " +
			"409 `project_retired`",
	}, s.patchProject)
	Register(s.api, Op{ID: "retire-project", Toolset: ToolsetProjects, Method: http.MethodDelete, Path: "/projects/{project_id}", Tags: tags,
		Summary: "Retire a project", Permissions: projectsWrite, Destroy: true, Status: http.StatusNoContent,
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Retires (never tears down); the short name and domain stay reserved. Retiring a retired project changes nothing.",
		Notes:       "retires; short name and domain stay reserved",
	}, func(ctx context.Context, in *ProjectIDInput) (*struct{}, error) {
		return nil, s.svc.Projects.RetireProject(ctx, ActorFrom(ctx), parseID(in.ProjectID))
	})
}

func (s *Server) listProjects(ctx context.Context, in *ListProjectsInput) (*ListOutput[Project], error) {
	f := resources.ProjectFilter{CustomerID: parseID(in.CustomerID), TenantID: parseID(in.TenantID), Status: in.Status,
		Kind: in.Kind, CustomerStatus: in.CustomerStatus, ProdLocked: in.ProdLocked.ptr()}
	return listPage(ctx, s, "projects", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.Project], error) {
		return s.svc.Projects.ListProjects(ctx, f, q)
	}, projectView)
}

func (s *Server) createProject(ctx context.Context, in *CreateProjectInput) (*AcceptedOutput, error) {
	b := in.Body
	op, err := s.svc.Projects.CreateProject(ctx, ActorFrom(ctx), resources.Project{CustomerID: parseID(b.CustomerID),
		TenantID: parseID(b.TenantID), ShortName: b.ShortName, Name: b.Name, Kind: b.Kind, Components: b.Components,
		Domain: b.Domain}, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return accepted(op), nil
}

func (s *Server) patchProject(ctx context.Context, in *PatchProjectInput) (*ProjectOutput, error) {
	p, err := s.svc.Projects.PatchProject(ctx, ActorFrom(ctx), parseID(in.ProjectID), in.Body.domain())
	if err != nil {
		return nil, err
	}
	return &ProjectOutput{Body: projectView(p)}, nil
}

package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// Tenant is a tenant as the API shows it.
type Tenant struct {
	ID         string    `json:"id" example:"7"`
	CustomerID string    `json:"customer_id" example:"42"`
	Slug       string    `json:"slug" example:"acme-labs"`
	Name       string    `json:"name" example:"Acme Labs"`
	Primary    bool      `json:"primary" doc:"The customer's primary tenant (slug = the customer's vcs_group)"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// TenantCreate is the body of POST /tenants.
type TenantCreate struct {
	CustomerID string `json:"customer_id" pattern:"^[1-9][0-9]{0,8}$" doc:"The customer the tenant belongs to"`
	Slug       string `json:"slug" minLength:"2" maxLength:"30" pattern:"^[a-z][a-z0-9-]{1,29}$" doc:"Unique among tenants and never a customer's vcs_group; frozen"`
	Name       string `json:"name" minLength:"2" maxLength:"80"`
}

// TenantPatch is the merge-patch body of PATCH /tenants/{id}.
type TenantPatch struct {
	Name       Optional[string] `json:"name,omitzero" minLength:"2" maxLength:"80"`
	Slug       Optional[string] `json:"slug,omitzero" maxLength:"30" doc:"Frozen"`
	CustomerID Optional[string] `json:"customer_id,omitzero" maxLength:"9" doc:"Frozen"`
}

func (p TenantPatch) domain() resources.TenantPatch {
	cid := resources.Patch[int64]{Set: p.CustomerID.Patch().Set, Null: p.CustomerID.Patch().Null, Value: parseID(p.CustomerID.Patch().Value)}
	return resources.TenantPatch{Name: p.Name.Patch(), Slug: p.Slug.Patch(), CustomerID: cid}
}

func tenantView(t resources.Tenant) Tenant {
	return Tenant{ID: formatID(t.ID), CustomerID: formatID(t.CustomerID), Slug: t.Slug, Name: t.Name, Primary: t.Primary,
		CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
}

// Inputs and outputs of the tenant operations.
type (
	ListTenantsInput struct {
		ListParams
		CustomerID string `query:"customer_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Only this customer's tenants"`
		Slug       string `query:"slug" maxLength:"30" doc:"Exact slug"`
	}
	TenantIDInput struct {
		TenantID string `path:"tenant_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Tenant id"`
	}
	CreateTenantInput struct {
		Body TenantCreate
	}
	PatchTenantInput struct {
		TenantIDInput
		Body TenantPatch `contentType:"application/merge-patch+json"`
	}
	TenantOutput struct {
		Body Tenant
	}
	TenantCreatedOutput struct {
		Location string `header:"Location" doc:"/api/v1/tenants/{id}"`
		Body     Tenant
	}
)

func (s *Server) registerTenants() {
	tags := []string{"Tenants"}
	Register(s.api, Op{ID: "list-tenants", Toolset: ToolsetTenancy, Method: http.MethodGet, Path: "/tenants", Tags: tags,
		Summary: "List tenants", Permissions: tenancyRead, Errors: []int{http.StatusBadRequest},
		Description: "Tenants in id order; customer_id gives one customer's, slug finds one; filters combine.",
		Notes:       "filters `customer_id`, `slug`",
	}, s.listTenants)
	Register(s.api, Op{ID: "create-tenant", Toolset: ToolsetTenancy, Method: http.MethodPost, Path: "/tenants", Tags: tags, Status: http.StatusCreated,
		Summary: "Create a tenant", Permissions: tenancyWrite, Idempotent: true,
		Errors:      []int{http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Adds a tenant to a live customer (404 customer_not_found; 409 customer_archived, slug_taken).",
		Notes: "201; `Idempotency-Key`; 409 `slug_taken`, `customer_archived`; 404 " +
			"`customer_not_found`",
	}, s.createTenant)
	s.registerTenant(tags)
}

// registerTenant declares the operations on one tenant.
func (s *Server) registerTenant(tags []string) {
	Register(s.api, Op{ID: "get-tenant", Toolset: ToolsetTenancy, Method: http.MethodGet, Path: "/tenants/{tenant_id}", Tags: tags,
		Summary: "Read a tenant", Permissions: tenancyRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One tenant of a customer: its slug, name and whether it is the customer's primary one.",
		Notes:       "404 `tenant_not_found`",
	}, func(ctx context.Context, in *TenantIDInput) (*TenantOutput, error) {
		t, err := s.svc.Tenants.GetTenant(ctx, parseID(in.TenantID))
		if err != nil {
			return nil, err
		}
		return &TenantOutput{Body: tenantView(*t)}, nil
	})
	Register(s.api, Op{ID: "patch-tenant", Toolset: ToolsetTenancy, Method: http.MethodPatch, Path: "/tenants/{tenant_id}", Tags: tags,
		Summary: "Rename a tenant (JSON Merge Patch)", Permissions: tenancyWrite,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict,
			http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "name changes; slug and customer_id are frozen (current value accepted, " +
			"another is 422 immutable_field). A tenant of an archived customer cannot be " +
			"changed (409 customer_archived).",
		Notes: "rename; `slug`, `customer_id` frozen; 409 `customer_archived`",
	}, s.patchTenant)
	Register(s.api, Op{ID: "delete-tenant", Toolset: ToolsetTenancy, Method: http.MethodDelete, Path: "/tenants/{tenant_id}", Tags: tags,
		Summary: "Delete an empty tenant", Permissions: tenancyWrite, Destroy: true, Status: http.StatusNoContent,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Only an empty tenant (no projects, retired ones included: 409 tenant_not_empty with blockers) " +
			"that is not the primary tenant of a live customer (409 tenant_is_primary).",
		Notes: "only when empty (409 `tenant_not_empty`) and not the primary tenant of a live " +
			"customer (409 `tenant_is_primary`)",
	}, func(ctx context.Context, in *TenantIDInput) (*struct{}, error) {
		return nil, s.svc.Tenants.DeleteTenant(ctx, ActorFrom(ctx), parseID(in.TenantID))
	})
}

func (s *Server) listTenants(ctx context.Context, in *ListTenantsInput) (*ListOutput[Tenant], error) {
	f := resources.TenantFilter{CustomerID: parseID(in.CustomerID), Slug: in.Slug}
	return listPage(ctx, s, "tenants", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.Tenant], error) {
		return s.svc.Tenants.ListTenants(ctx, f, q)
	}, tenantView)
}

func (s *Server) createTenant(ctx context.Context, in *CreateTenantInput) (*TenantCreatedOutput, error) {
	t, err := s.svc.Tenants.CreateTenant(ctx, ActorFrom(ctx), resources.Tenant{CustomerID: parseID(in.Body.CustomerID),
		Slug: in.Body.Slug, Name: in.Body.Name}, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &TenantCreatedOutput{Location: Prefix + "/tenants/" + formatID(t.ID), Body: tenantView(t)}, nil
}

func (s *Server) patchTenant(ctx context.Context, in *PatchTenantInput) (*TenantOutput, error) {
	t, err := s.svc.Tenants.PatchTenant(ctx, ActorFrom(ctx), parseID(in.TenantID), in.Body.domain())
	if err != nil {
		return nil, err
	}
	return &TenantOutput{Body: tenantView(t)}, nil
}

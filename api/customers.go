package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// Warning tells the caller's user about a later step that did not complete;
// the change stands.
type Warning struct {
	Code    string `json:"code" example:"vcs_group_failed" doc:"Stable machine-readable reason"`
	Message string `json:"message" doc:"Wording for people; may change"`
}

// VCSStatus is the live state of a customer's code-host group.
type VCSStatus struct {
	State  string  `json:"state" enum:"present,missing,unknown"`
	WebURL *string `json:"web_url" nullable:"true"`
}

// Customer is a customer as the API shows it.
type Customer struct {
	ID                  string              `json:"id" example:"42"`
	ShortName           string              `json:"short_name" example:"ACME"`
	LongName            string              `json:"long_name" example:"Acme Corporation"`
	VCSGroup            string              `json:"vcs_group" example:"acme"`
	PrimaryContactEmail string              `json:"primary_contact_email" example:"jane@acme.example"`
	PrimaryContactName  string              `json:"primary_contact_name" example:"Jane Doe"`
	BillingTier         string              `json:"billing_tier" enum:"INTERNAL,PAYING"`
	CustomerIndex       int                 `json:"customer_index" minimum:"1" maximum:"999"`
	DefaultEmailTier    int                 `json:"default_email_tier" enum:"1,2,3"`
	Edition             string              `json:"edition" enum:"sp,enterprise"`
	Notes               *string             `json:"notes" nullable:"true"`
	Status              string              `json:"status" doc:"active, suspended or archived, …"`
	CreatedAt           time.Time           `json:"created_at"`
	UpdatedAt           time.Time           `json:"updated_at"`
	VCSStatus           Nullable[VCSStatus] `json:"vcs_status,omitzero" fields:"-" doc:"With include=vcs_status: the group looked up live; null when the code host cannot be reached"`
	ProjectCount        *int                `json:"project_count,omitempty" doc:"With include=project_count (lists): the customer's projects, retired included"`
	Warnings            []Warning           `json:"warnings,omitempty" fields:"-" doc:"Later steps that did not complete"`
}

// CustomerCreate is the body of POST /customers.
type CustomerCreate struct {
	ShortName           string  `json:"short_name" minLength:"2" maxLength:"16" pattern:"^[A-Z][A-Z0-9]{1,15}$" doc:"Frozen after create"`
	LongName            string  `json:"long_name" minLength:"3" maxLength:"80"`
	VCSGroup            string  `json:"vcs_group" minLength:"2" maxLength:"30" pattern:"^[a-z][a-z0-9-]{1,29}$" doc:"Code-host group and primary tenant slug; frozen"`
	PrimaryContactEmail string  `json:"primary_contact_email" minLength:"3" maxLength:"320" doc:"Stored normalised"`
	PrimaryContactName  string  `json:"primary_contact_name" minLength:"2" maxLength:"80"`
	BillingTier         string  `json:"billing_tier,omitempty" enum:"INTERNAL,PAYING" doc:"Default INTERNAL"`
	CustomerIndex       *int    `json:"customer_index,omitempty" minimum:"1" maximum:"999" nullable:"true" doc:"Omitted or null: the next free index"`
	DefaultEmailTier    int     `json:"default_email_tier,omitempty" enum:"1,2,3" doc:"Default 3"`
	Edition             string  `json:"edition,omitempty" enum:"sp,enterprise" doc:"Default sp; frozen"`
	Notes               *string `json:"notes,omitempty" maxLength:"2000" nullable:"true"`
	Status              string  `json:"status,omitempty" enum:"active,suspended" doc:"Default active"`
}

// CustomerPatch is the merge-patch body of PATCH /customers/{id}; only notes
// is nullable; frozen members accept their current value only.
type CustomerPatch struct {
	BillingTier         Optional[string] `json:"billing_tier,omitzero" enum:"INTERNAL,PAYING"`
	CustomerIndex       Optional[int]    `json:"customer_index,omitzero" minimum:"1" maximum:"999" doc:"Frozen"`
	DefaultEmailTier    Optional[int]    `json:"default_email_tier,omitzero" enum:"1,2,3"`
	Edition             Optional[string] `json:"edition,omitzero" enum:"sp,enterprise" doc:"Frozen"`
	VCSGroup            Optional[string] `json:"vcs_group,omitzero" maxLength:"30" doc:"Frozen"`
	LongName            Optional[string] `json:"long_name,omitzero" minLength:"3" maxLength:"80"`
	Notes               Nullable[string] `json:"notes,omitzero" maxLength:"2000" doc:"null clears it"`
	PrimaryContactEmail Optional[string] `json:"primary_contact_email,omitzero" minLength:"3" maxLength:"320"`
	PrimaryContactName  Optional[string] `json:"primary_contact_name,omitzero" minLength:"2" maxLength:"80"`
	ShortName           Optional[string] `json:"short_name,omitzero" maxLength:"16" doc:"Frozen"`
	Status              Optional[string] `json:"status,omitzero" enum:"active,suspended"`
}

func (p CustomerPatch) domain() resources.CustomerPatch {
	return resources.CustomerPatch{BillingTier: p.BillingTier.Patch(), CustomerIndex: p.CustomerIndex.Patch(),
		DefaultEmailTier: p.DefaultEmailTier.Patch(), Edition: p.Edition.Patch(), VCSGroup: p.VCSGroup.Patch(),
		LongName: p.LongName.Patch(), Notes: p.Notes.Patch(), PrimaryContactEmail: p.PrimaryContactEmail.Patch(),
		PrimaryContactName: p.PrimaryContactName.Patch(), ShortName: p.ShortName.Patch(), Status: p.Status.Patch()}
}

func (b CustomerCreate) domain() (resources.CustomerCreate, error) {
	c := resources.Customer{ShortName: b.ShortName, LongName: b.LongName, VCSGroup: b.VCSGroup,
		PrimaryContactEmail: b.PrimaryContactEmail, PrimaryContactName: b.PrimaryContactName, BillingTier: b.BillingTier,
		DefaultEmailTier: b.DefaultEmailTier, Edition: b.Edition, Notes: b.Notes, Status: b.Status}
	if b.CustomerIndex != nil {
		c.CustomerIndex = *b.CustomerIndex
	}
	return resources.NewCustomer(c, b.CustomerIndex != nil)
}

func customerView(c resources.Customer) Customer {
	return Customer{ID: formatID(c.ID), ShortName: c.ShortName, LongName: c.LongName, VCSGroup: c.VCSGroup,
		PrimaryContactEmail: c.PrimaryContactEmail, PrimaryContactName: c.PrimaryContactName, BillingTier: c.BillingTier,
		CustomerIndex: c.CustomerIndex, DefaultEmailTier: c.DefaultEmailTier, Edition: c.Edition, Notes: c.Notes,
		Status: c.Status, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), ProjectCount: c.ProjectCount}
}

// Inputs and outputs of the customer operations.
type (
	ListCustomersInput struct {
		ListParams
		ShortName string   `query:"short_name" maxLength:"16" doc:"Exact short name"`
		VCSGroup  string   `query:"vcs_group" maxLength:"30" doc:"Exact code-host group"`
		Status    []string `query:"status" enum:"active,suspended,archived" doc:"Customer status"`
		Include   string   `query:"include" enum:"project_count" doc:"project_count: each item carries project_count, its projects (retired included)"`
	}
	CustomerIDInput struct {
		CustomerID string `path:"customer_id" pattern:"^[1-9][0-9]{0,8}$" doc:"Customer id"`
	}
	GetCustomerInput struct {
		CustomerIDInput
		Include string `query:"include" enum:"vcs_status" doc:"vcs_status: look the code-host group up live"`
	}
	CreateCustomerInput struct {
		Body CustomerCreate
	}
	PatchCustomerInput struct {
		CustomerIDInput
		Body CustomerPatch `contentType:"application/merge-patch+json"`
	}
	CustomerOutput struct {
		Body Customer
	}
	CustomerCreatedOutput struct {
		Location string `header:"Location" doc:"/api/v1/customers/{id}"`
		Body     Customer
	}
)

var (
	tenancyRead  = []string{resources.PermTenancyRead, resources.PermTenancyWrite}
	tenancyWrite = []string{resources.PermTenancyWrite}
)

func (s *Server) registerCustomers() {
	tags := []string{"Customers"}
	Register(s.api, Op{ID: "list-customers", Toolset: ToolsetTenancy, Method: http.MethodGet, Path: "/customers", Tags: tags,
		Summary: "List customers", Permissions: tenancyRead, Errors: []int{http.StatusBadRequest},
		Description: "Customers in id order, archived included; short_name, vcs_group and status filter " +
			"and combine. include=project_count adds each one's project count. Never contacts the code host.",
		Notes: "filters `short_name`, `vcs_group`, `status` (exact, combined); " +
			"`include=project_count` adds each customer's `project_count` (retired projects " +
			"included; same query); id order; archived included; never contacts the code host",
	}, s.listCustomers)
	Register(s.api, Op{ID: "create-customer", Toolset: ToolsetTenancy, Method: http.MethodPost, Path: "/customers", Tags: tags, Status: http.StatusCreated,
		Limit:   resources.LimitCustomers,
		Summary: "Create a customer", Permissions: tenancyWrite, Idempotent: true,
		Errors: []int{http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Creates the customer and its primary tenant (slug = vcs_group) in one transaction, then creates or " +
			"adopts the code-host group. A code-host failure is a warning (vcs_group_failed), never an error. 409 codes: " +
			"customer_index_taken, short_name_taken, vcs_group_taken, vcs_group_collision, customer_index_exhausted.",
		Notes: "201 + `Location`; `Idempotency-Key`; customer + primary tenant in one " +
			"transaction, then the code-host group (failure → `warnings: vcs_group_failed`); " +
			"409 `customer_index_taken`, `short_name_taken`, `vcs_group_taken`, " +
			"`vcs_group_collision`, `customer_index_exhausted`",
	}, s.createCustomer)
	s.registerCustomer(tags)
}

// registerCustomer declares the operations on one customer.
func (s *Server) registerCustomer(tags []string) {
	Register(s.api, Op{ID: "get-customer", Toolset: ToolsetTenancy, OpenWorld: true, Method: http.MethodGet, Path: "/customers/{customer_id}", Tags: tags,
		Summary: "Read a customer", Permissions: tenancyRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Archived customers included. include=vcs_status looks the code-host group up live; an " +
			"unreachable code host gives vcs_status null and the warning vcs_status_unavailable.",
		Notes: "`include=vcs_status` looks the group up live (unreachable → `vcs_status: null` " +
			"+ warning)",
	}, s.getCustomer)
	Register(s.api, Op{ID: "patch-customer", Toolset: ToolsetTenancy, Method: http.MethodPatch, Path: "/customers/{customer_id}", Tags: tags,
		Summary: "Change a customer (JSON Merge Patch)", Permissions: tenancyWrite,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Only the members sent change. Frozen: customer_index, short_name, vcs_group, edition (current value " +
			"accepted, another is 422 immutable_field). Only notes may be null. An archived customer is 409 customer_archived.",
		Notes: "JSON Merge Patch; frozen `customer_index`, `short_name`, `vcs_group`, " +
			"`edition` (422 `immutable_field`); only `notes` nullable; archived → 409 " +
			"`customer_archived`",
	}, s.patchCustomer)
	Register(s.api, Op{ID: "archive-customer", Toolset: ToolsetTenancy, Method: http.MethodDelete, Path: "/customers/{customer_id}", Tags: tags,
		Summary: "Archive a customer", Permissions: tenancyWrite, Destroy: true, Status: http.StatusNoContent,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Archives (never deletes) a customer without projects, retired ones included (else 409 " +
			"customer_has_projects with blockers). Archiving an archived customer succeeds and changes nothing. " +
			"409 conflict when the customer is being changed concurrently; retry.",
		Notes: "archives; 409 `customer_has_projects` (`blockers`; retired projects count, so " +
			"a customer that ever had one is never archived), 409 `conflict`; again → 204, no " +
			"change",
	}, s.archiveCustomer)
}

func (s *Server) listCustomers(ctx context.Context, in *ListCustomersInput) (*ListOutput[Customer], error) {
	f := resources.CustomerFilter{ShortName: in.ShortName, VCSGroup: in.VCSGroup, Status: in.Status,
		WithProjectCount: in.Include == "project_count"}
	return listPage(ctx, s, "customers", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.Customer], error) {
		return s.svc.Customers.ListCustomers(ctx, f, q)
	}, customerView)
}

func (s *Server) patchCustomer(ctx context.Context, in *PatchCustomerInput) (*CustomerOutput, error) {
	c, err := s.svc.Customers.PatchCustomer(ctx, ActorFrom(ctx), parseID(in.CustomerID), in.Body.domain())
	if err != nil {
		return nil, err
	}
	return &CustomerOutput{Body: customerView(c)}, nil
}

func (s *Server) archiveCustomer(ctx context.Context, in *CustomerIDInput) (*struct{}, error) {
	return nil, s.svc.Customers.ArchiveCustomer(ctx, ActorFrom(ctx), parseID(in.CustomerID))
}

package resources

import (
	"context"
	"fmt"
	"time"
)

// Tenant problem codes.
const (
	CodeTenantNotFound  = "tenant_not_found"
	CodeTenantNotEmpty  = "tenant_not_empty"
	CodeTenantIsPrimary = "tenant_is_primary"
	CodeSlugTaken       = "slug_taken"
)

// Tenant is a tenant of a customer; each customer has one primary tenant
// whose slug is the customer's vcs_group.
type Tenant struct {
	ID         int64     `json:"id"`
	CustomerID int64     `json:"customer_id"`
	Slug       string    `json:"slug"`
	Name       string    `json:"name"`
	Primary    bool      `json:"primary"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// TenantFilter narrows the tenant list; filters are exact and combine.
type TenantFilter struct {
	CustomerID int64  `json:"customer_id,omitempty"`
	Slug       string `json:"slug,omitempty"`
}

// TenantPatch is a merge patch of a tenant: the name changes; customer_id
// and slug are frozen (their current value is accepted).
type TenantPatch struct {
	Name       Patch[string]
	Slug       Patch[string]
	CustomerID Patch[int64]
}

// RecoveryTenantCreated is the recovery point of a keyed tenant create.
const RecoveryTenantCreated = "tenant_created"

// Apply returns the tenant after the patch.
func (t Tenant) Apply(p TenantPatch) (Tenant, error) {
	if err := Frozen("slug", p.Slug, t.Slug); err != nil {
		return t, err
	}
	if err := Frozen("customer_id", p.CustomerID, t.CustomerID); err != nil {
		return t, err
	}
	Apply(&t.Name, p.Name)
	return t, nil
}

// CheckTenantChange refuses any change to a tenant of an archived customer:
// an archived customer cannot be changed, its tenants included (deleting an
// empty one stays allowed, see CheckTenantDelete).
func CheckTenantChange(t Tenant, customerStatus string) error {
	return CheckCustomerLive(t.CustomerID, customerStatus,
		fmt.Sprintf("its tenant %d cannot be changed", t.ID))
}

// CheckTenantDelete allows deleting only an empty tenant that is not the
// primary tenant of a live customer.
func CheckTenantDelete(t Tenant, customerStatus string, projects int) error {
	if t.Primary && customerStatus != CustomerArchived {
		return Errorf(KindConflict, CodeTenantIsPrimary, "tenant %d is the primary tenant of a live customer", t.ID)
	}
	if projects > 0 {
		e := Errorf(KindConflict, CodeTenantNotEmpty, "tenant %d holds %d project(s) (retired ones count)", t.ID, projects)
		e.Blockers = map[string]int{"projects": projects}
		return e
	}
	return nil
}

// Tenants stores tenants. A tenant is deleted only when it is empty and not
// the primary tenant of a live customer.
type Tenants interface {
	ListTenants(ctx context.Context, f TenantFilter, q PageQuery) (Page[Tenant], error)
	GetTenant(ctx context.Context, id int64) (*Tenant, error)
	CreateTenant(ctx context.Context, a Actor, t Tenant, l *Lease) (Tenant, error)
	PatchTenant(ctx context.Context, a Actor, id int64, p TenantPatch) (Tenant, error)
	DeleteTenant(ctx context.Context, a Actor, id int64) error
}

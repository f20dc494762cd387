package resources

import (
	"context"
	"slices"
	"time"
)

// Project kinds, components and statuses.
const (
	ProjectCluster      = "cluster"
	ProjectVM           = "vm"
	ComponentAppAPI     = "app-api"
	ComponentWWW        = "www"
	ProjectProvisioning = "provisioning"
	ProjectActive       = "active"
	ProjectRetired      = "retired"
	RecoveryProjectMade = "project_created"
)

// Project problem codes.
const (
	CodeProjectNotFound     = "project_not_found"
	CodeProjectRetired      = "project_retired"
	CodeProjectReadOnly     = "project_read_only"
	CodeProjectNameTaken    = "project_short_name_taken"
	CodeProjectDomainTaken  = "domain_taken"
	CodeTenantOfOtherClient = "tenant_not_of_customer"
)

// Project is a project of a customer, in one of its tenants.
type Project struct {
	ID         int64    `json:"id"`
	CustomerID int64    `json:"customer_id"`
	TenantID   int64    `json:"tenant_id"`
	ShortName  string   `json:"short_name"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Components []string `json:"components"`
	Domain     *string  `json:"domain"`
	Status     string   `json:"status"`
	Platform   bool     `json:"platform"`
	// ProdLocked is whether the PROD data lock is set (ProdLock.Locked).
	ProdLocked bool      `json:"prod_locked"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ProjectPatch is a merge patch of a project: name, components and domain
// change; customer, tenant, short name and kind are frozen.
type ProjectPatch struct {
	Name, ShortName, Kind Patch[string]
	Domain                Patch[string]
	Components            Patch[[]string]
	CustomerID, TenantID  Patch[int64]
}

// ProjectFilter narrows the project list; filters are exact and combine.
type ProjectFilter struct {
	CustomerID int64    `json:"customer_id,omitempty"`
	TenantID   int64    `json:"tenant_id,omitempty"`
	Status     []string `json:"status,omitempty"` // any of these statuses
	Kind       []string `json:"kind,omitempty"`   // any of these kinds
	// CustomerStatus keeps the projects of customers in this status.
	CustomerStatus []string `json:"customer_status,omitempty"`
	// ProdLocked keeps the projects whose PROD data lock is (true) or is
	// not (false) set; nil keeps both.
	ProdLocked *bool `json:"prod_locked,omitempty"`
}

// CheckWritable refuses any write to the platform's own projects and to a
// retired project.
func (p Project) CheckWritable() error {
	if p.Platform {
		return Errorf(KindConflict, CodeProjectReadOnly, "project %d belongs to the platform and is read-only", p.ID)
	}
	if p.Status == ProjectRetired {
		return Errorf(KindConflict, CodeProjectRetired, "project %d is retired", p.ID)
	}
	return nil
}

// Apply returns the project after the patch.
func (p Project) Apply(pt ProjectPatch) (Project, error) {
	if err := p.CheckWritable(); err != nil {
		return p, err
	}
	for _, err := range []error{Frozen("short_name", pt.ShortName, p.ShortName), Frozen("kind", pt.Kind, p.Kind),
		Frozen("customer_id", pt.CustomerID, p.CustomerID), Frozen("tenant_id", pt.TenantID, p.TenantID)} {
		if err != nil {
			return p, err
		}
	}
	Apply(&p.Name, pt.Name)
	if pt.Components.Set {
		p.Components = NormalizeComponents(pt.Components.Value)
	}
	ApplyNullable(&p.Domain, pt.Domain)
	return p, nil
}

// NormalizeComponents sorts and de-duplicates components.
func NormalizeComponents(c []string) []string {
	out := slices.Clone(c)
	slices.Sort(out)
	return slices.Compact(out)
}

// Projects stores projects. CreateProject writes the project (status
// provisioning), its provisioning operation and the job that runs it in one
// transaction.
type Projects interface {
	ListProjects(ctx context.Context, f ProjectFilter, q PageQuery) (Page[Project], error)
	GetProject(ctx context.Context, id int64) (*Project, error)
	CreateProject(ctx context.Context, a Actor, p Project, l *Lease) (Operation, error)
	PatchProject(ctx context.Context, a Actor, id int64, p ProjectPatch) (Project, error)
	RetireProject(ctx context.Context, a Actor, id int64) error
}

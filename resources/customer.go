package resources

import (
	"context"
	"time"
)

// Customer status values; archived is final.
const (
	CustomerActive    = "active"
	CustomerSuspended = "suspended"
	CustomerArchived  = "archived"
)

// Customer field defaults and bounds.
const (
	DefaultBillingTier      = "INTERNAL"
	DefaultEmailTier        = 3
	DefaultEdition          = "sp"
	MinCustomerIndex        = 1
	MaxCustomerIndex        = 999
	RecoveryCustomerCreated = "customer_created"
)

// Customer problem codes.
const (
	CodeCustomerNotFound       = "customer_not_found"
	CodeCustomerArchived       = "customer_archived"
	CodeCustomerHasProjects    = "customer_has_projects"
	CodeCustomerIndexTaken     = "customer_index_taken"
	CodeCustomerIndexExhausted = "customer_index_exhausted"
	CodeShortNameTaken         = "short_name_taken"
	CodeVCSGroupTaken          = "vcs_group_taken"
)

// Customer is a customer of the installation.
type Customer struct {
	ID                  int64     `json:"id"`
	ShortName           string    `json:"short_name"`
	LongName            string    `json:"long_name"`
	VCSGroup            string    `json:"vcs_group"`
	PrimaryContactEmail string    `json:"primary_contact_email"`
	PrimaryContactName  string    `json:"primary_contact_name"`
	BillingTier         string    `json:"billing_tier"`
	CustomerIndex       int       `json:"customer_index"`
	DefaultEmailTier    int       `json:"default_email_tier"`
	Edition             string    `json:"edition"`
	Notes               *string   `json:"notes"`
	Status              string    `json:"status"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
	// ProjectCount is the number of the customer's projects (retired
	// included); set only when a list asks for it.
	ProjectCount *int `json:"project_count,omitempty"`
}

// CustomerCreate is a validated create request; zero optional members take
// their defaults, a nil CustomerIndex is allocated.
type CustomerCreate struct {
	Customer
	IndexGiven bool
}

// CustomerPatch is a merge patch of a customer.
type CustomerPatch struct {
	BillingTier, Edition, VCSGroup, LongName, PrimaryContactEmail Patch[string]
	PrimaryContactName, ShortName, Status, Notes                  Patch[string]
	CustomerIndex, DefaultEmailTier                               Patch[int]
}

// NewCustomer applies the create defaults and normalises the contact e-mail.
func NewCustomer(c Customer, indexGiven bool) (CustomerCreate, error) {
	email, err := NormalizeEmail("primary_contact_email", c.PrimaryContactEmail)
	if err != nil {
		return CustomerCreate{}, err
	}
	c.PrimaryContactEmail = email
	c.BillingTier = orDefault(c.BillingTier, DefaultBillingTier)
	c.Edition = orDefault(c.Edition, DefaultEdition)
	c.Status = orDefault(c.Status, CustomerActive)
	if c.DefaultEmailTier == 0 {
		c.DefaultEmailTier = DefaultEmailTier
	}
	return CustomerCreate{Customer: c, IndexGiven: indexGiven}, nil
}

// VCSGroupTaken is 409 vcs_group_taken: a customer's vcs_group or a
// tenant's slug holds group.
func VCSGroupTaken(group string) *Error {
	e := Errorf(KindConflict, CodeVCSGroupTaken, "vcs group %s is taken", group)
	e.Field = "vcs_group"
	return e
}

// CheckCustomerLive refuses, 409 customer_archived, a write that would
// change an archived customer or what belongs to it (a patch, a tenant, a
// project); refused says what, after "customer N is archived: ".
func CheckCustomerLive(id int64, status, refused string) error {
	if status == CustomerArchived {
		return Errorf(KindConflict, CodeCustomerArchived, "customer %d is archived: %s", id, refused)
	}
	return nil
}

// Apply returns the customer after the patch: an archived customer refuses
// any change; frozen members accept only their current value.
func (c Customer) Apply(p CustomerPatch) (Customer, error) {
	if err := CheckCustomerLive(c.ID, c.Status, "it cannot be changed"); err != nil {
		return c, err
	}
	for _, err := range []error{
		Frozen("customer_index", p.CustomerIndex, c.CustomerIndex), Frozen("edition", p.Edition, c.Edition),
		Frozen("short_name", p.ShortName, c.ShortName), Frozen("vcs_group", p.VCSGroup, c.VCSGroup),
	} {
		if err != nil {
			return c, err
		}
	}
	if p.PrimaryContactEmail.Set {
		email, err := NormalizeEmail("primary_contact_email", p.PrimaryContactEmail.Value)
		if err != nil {
			return c, err
		}
		p.PrimaryContactEmail.Value = email
	}
	Apply(&c.BillingTier, p.BillingTier)
	Apply(&c.DefaultEmailTier, p.DefaultEmailTier)
	Apply(&c.LongName, p.LongName)
	Apply(&c.PrimaryContactEmail, p.PrimaryContactEmail)
	Apply(&c.PrimaryContactName, p.PrimaryContactName)
	Apply(&c.Status, p.Status)
	ApplyNullable(&c.Notes, p.Notes)
	return c, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// CustomerFilter narrows the customer list; filters are exact and combine.
type CustomerFilter struct {
	ShortName string   `json:"short_name,omitempty"`
	VCSGroup  string   `json:"vcs_group,omitempty"`
	Status    []string `json:"status,omitempty"` // any of these statuses
	// WithProjectCount fills Customer.ProjectCount (in the same query).
	WithProjectCount bool `json:"-"`
}

// Customers stores customers. CreateCustomer writes the customer, its
// primary tenant, the audit event and the idempotency recovery point in one
// transaction; with a lease resumed past that point it returns the customer
// already created.
type Customers interface {
	ListCustomers(ctx context.Context, f CustomerFilter, q PageQuery) (Page[Customer], error)
	GetCustomer(ctx context.Context, id int64) (*Customer, error)
	CreateCustomer(ctx context.Context, a Actor, c CustomerCreate, l *Lease) (Customer, error)
	PatchCustomer(ctx context.Context, a Actor, id int64, p CustomerPatch) (Customer, error)
	ArchiveCustomer(ctx context.Context, a Actor, id int64) error
}

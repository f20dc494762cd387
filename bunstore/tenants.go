package bunstore

import (
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// tenantRow is the bun model of tenants; its JSON form is the audit state.
type tenantRow struct {
	bun.BaseModel `bun:"table:tenants"`
	ID            int64     `bun:"id,pk,autoincrement" json:"id"`
	CustomerID    int64     `bun:"customer_id" json:"customer_id"`
	Slug          string    `bun:"slug" json:"slug"`
	Name          string    `bun:"name" json:"name"`
	Primary       bool      `bun:"is_primary" json:"primary"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
}

func (r tenantRow) tenant() resources.Tenant {
	return resources.Tenant{ID: r.ID, CustomerID: r.CustomerID, Slug: r.Slug, Name: r.Name, Primary: r.Primary,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

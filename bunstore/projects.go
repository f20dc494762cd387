package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// projectRow is the bun model of projects; its JSON form is the audit state.
type projectRow struct {
	bun.BaseModel `bun:"table:projects"`
	ID            int64    `bun:"id,pk,autoincrement" json:"id"`
	CustomerID    int64    `bun:"customer_id" json:"customer_id"`
	TenantID      int64    `bun:"tenant_id" json:"tenant_id"`
	ShortName     string   `bun:"short_name" json:"short_name"`
	Name          string   `bun:"name" json:"name"`
	Kind          string   `bun:"kind" json:"kind"`
	Components    []string `bun:"components,array" json:"components"`
	Domain        *string  `bun:"domain" json:"domain"`
	Status        string   `bun:"status" json:"status"`
	Platform      bool     `bun:"platform" json:"platform"`
	// ProdLocked is read with projectColumns; the lock has its own audit rows.
	ProdLocked bool      `bun:"prod_locked,scanonly" json:"-"`
	CreatedAt  time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt  time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
}

func (r projectRow) project() resources.Project {
	return resources.Project{ID: r.ID, CustomerID: r.CustomerID, TenantID: r.TenantID, ShortName: r.ShortName,
		Name: r.Name, Kind: r.Kind, Components: nonNilStrings(r.Components), Domain: r.Domain, Status: r.Status,
		Platform: r.Platform, ProdLocked: r.ProdLocked, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// prodLocked is whether a project's PROD data lock is set, as SQL over
// the projects table (aliased project_row, bun's name for projectRow).
const prodLocked = "EXISTS (SELECT 1 FROM prod_locks AS pl WHERE pl.project_id = project_row.id AND pl.locked)"

// projectColumns are the columns a project is read with.
var projectColumns = []string{"project_row.*", prodLocked + " AS prod_locked"}

func projectByID(ctx context.Context, db bun.IDB, id int64, lock string) (*projectRow, error) {
	return rowByID[projectRow](ctx, db, id, lock,
		resources.NotFound(resources.CodeProjectNotFound, "no project %d", id), projectColumns...)
}

// ListProjects lists projects in id order (retired included), one page.
func (s *Store) ListProjects(ctx context.Context, f resources.ProjectFilter, q resources.PageQuery) (resources.Page[resources.Project], error) {
	sel, err := byID(s.db.NewSelect().Model((*projectRow)(nil)), q.After)
	if err != nil {
		return resources.Page[resources.Project]{}, err
	}
	if f.CustomerID != 0 {
		sel.Where("customer_id = ?", f.CustomerID)
	}
	if f.TenantID != 0 {
		sel.Where("tenant_id = ?", f.TenantID)
	}
	whereIn(sel, "status", f.Status)
	whereIn(sel, "kind", f.Kind)
	if len(f.CustomerStatus) > 0 {
		sel.Where("customer_id IN (SELECT id FROM customers WHERE status IN (?))", bun.In(f.CustomerStatus))
	}
	if f.ProdLocked != nil {
		sel.Where(prodLocked+" = ?", *f.ProdLocked)
	}
	for _, c := range projectColumns {
		sel.ColumnExpr(c)
	}
	return scanPage(ctx, sel, q.Limit, projectRow.project, func(p resources.Project) []string { return idKey(p.ID) })
}

// GetProject reads one project.
func (s *Store) GetProject(ctx context.Context, id int64) (*resources.Project, error) {
	row, err := projectByID(ctx, s.db, id, "")
	if err != nil {
		return nil, err
	}
	p := row.project()
	return &p, nil
}

// CreateProject implements resources.Projects (see there).
func (s *Store) CreateProject(ctx context.Context, a resources.Actor, p resources.Project, l *resources.Lease) (resources.Operation, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryProjectMade); err != nil || resumed {
		return resumeCreate(ctx, id, err, func(ctx context.Context, id int64) (*resources.Operation, error) {
			return s.GetOperation(ctx, idString(id))
		})
	}
	var out resources.Operation
	err := s.inTx(ctx, func(tx bun.Tx) error {
		row, err := insertProject(ctx, tx, p)
		if err != nil {
			return err
		}
		op, err := insertOperation(ctx, tx, resources.OpKindProjectProvision, "project", idString(row.ID))
		if err != nil {
			return err
		}
		if err := s.enqueue(ctx, tx, provisionArgs{OperationID: op.ID}); err != nil {
			return err
		}
		out = op.operation()
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "project.create", entityType: "project",
			entityID: idString(row.ID), after: row},
			recovery{lease: l, point: resources.RecoveryProjectMade, data: createdID{op.ID}, result: out})
	})
	return out, err
}

// insertProject checks the customer (live) and tenant (the customer's;
// default its primary) and inserts the project as provisioning.
func insertProject(ctx context.Context, tx bun.Tx, p resources.Project) (*projectRow, error) {
	c, err := customerByID(ctx, tx, p.CustomerID, "SHARE")
	if err != nil {
		return nil, err
	}
	if err := resources.CheckCustomerLive(c.ID, c.Status, "it takes no new project"); err != nil {
		return nil, err
	}
	t := &tenantRow{}
	sel := tx.NewSelect().Model(t).Where("customer_id = ?", c.ID).For("SHARE")
	if p.TenantID == 0 {
		sel.Where("is_primary")
	} else {
		sel.Where("id = ?", p.TenantID)
	}
	if err := sel.Scan(ctx); err != nil {
		if noRows(err) {
			return nil, resources.Invalid("tenant_id", resources.CodeTenantOfOtherClient, "tenant %d is not a tenant of customer %d", p.TenantID, c.ID)
		}
		return nil, err
	}
	row := &projectRow{CustomerID: c.ID, TenantID: t.ID, ShortName: p.ShortName, Name: p.Name, Kind: p.Kind,
		Components: resources.NormalizeComponents(nonNilStrings(p.Components)), Domain: p.Domain, Status: resources.ProjectProvisioning}
	if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx); err != nil {
		return nil, projectConflict(err, row)
	}
	return row, nil
}

func projectConflict(err error, row *projectRow) error {
	switch {
	case uniqueViolation(err, "projects_short_name_key"):
		e := resources.Errorf(resources.KindConflict, resources.CodeProjectNameTaken, "project short name %s is taken (retired projects keep theirs)", row.ShortName)
		e.Field = "short_name"
		return e
	case uniqueViolation(err, "projects_domain_key"):
		e := resources.Errorf(resources.KindConflict, resources.CodeProjectDomainTaken, "domain %s is taken (retired projects keep theirs)", *row.Domain)
		e.Field = "domain"
		return e
	}
	return err
}

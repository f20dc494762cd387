package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// selectReleases selects release operations with their project's short name
// and customer, the members every read of a release operation answers; the
// release operation's columns are ?TableAlias's.
func selectReleases(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().Model((*releaseRow)(nil)).ColumnExpr("?TableAlias.*").
		ColumnExpr("p.short_name AS project_short_name, p.customer_id AS customer_id").
		Join("JOIN projects AS p ON p.id = ?TableAlias.project_id")
}

// projectOfRelease sets a release operation's project members from its
// project (for a row read without selectReleases, such as a locked one).
func projectOfRelease(ctx context.Context, db bun.IDB, row *releaseRow) error {
	err := db.NewSelect().Table("projects").Column("short_name", "customer_id").
		Where("id = ?", row.ProjectID).Scan(ctx, &row.ProjectShortName, &row.CustomerID)
	if err != nil {
		return fmt.Errorf("read the project of release operation %d: %w", row.ID, err)
	}
	return nil
}

// ListFleetReleaseOperations lists the release operations of every project
// newest first (created_at, id), narrowed by f (project_id and customer_id
// included); data copies are included unless a component is asked for.
func (s *Store) ListFleetReleaseOperations(ctx context.Context, f resources.ReleaseFilter,
	q resources.PageQuery) (resources.Page[resources.ReleaseOperation], error) {
	return s.listReleases(ctx, f, q)
}

// listReleases is one keyset page of release operations narrowed by f, in
// one query (ordered by the index on created_at, id).
func (s *Store) listReleases(ctx context.Context, f resources.ReleaseFilter,
	q resources.PageQuery) (resources.Page[resources.ReleaseOperation], error) {
	sel := selectReleases(s.db).OrderExpr("?TableAlias.created_at DESC, ?TableAlias.id DESC")
	for col, values := range map[string][]string{"status": f.Status, "target_env": f.TargetEnv,
		"component": f.Component} {
		if len(values) > 0 {
			sel.Where("?TableAlias.? IN (?)", bun.Ident(col), bun.In(values))
		}
	}
	if f.ProjectID != 0 {
		sel.Where("?TableAlias.project_id = ?", f.ProjectID)
	}
	if f.CustomerID != 0 {
		sel.Where("p.customer_id = ?", f.CustomerID)
	}
	if q.After != nil {
		at, id, err := timeIDKey(q.After)
		if err != nil {
			return resources.Page[resources.ReleaseOperation]{}, errBadKey
		}
		sel.Where("(?TableAlias.created_at, ?TableAlias.id) < (?, ?)", at, id)
	}
	pg, err := scanPage(ctx, sel, q.Limit, releaseRow.release,
		func(r resources.ReleaseOperation) []string {
			return []string{r.CreatedAt.UTC().Format(time.RFC3339Nano), idString(r.ID)}
		})
	if err != nil {
		return pg, fmt.Errorf("list release operations: %w", err)
	}
	return pg, nil
}

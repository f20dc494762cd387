package bunstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// operationListRow is one row of the list of every operation: an operations
// row (Release false) or a release operation (Release true, with its own
// kind, project, version and target environment).
type operationListRow struct {
	ID         int64                        `bun:"id"`
	Release    bool                         `bun:"is_release"`
	Kind       string                       `bun:"kind"`
	Status     string                       `bun:"status"`
	TargetType string                       `bun:"target_type"`
	TargetID   string                       `bun:"target_id"`
	Error      *resources.OperationError    `bun:"error,type:jsonb"`
	Result     json.RawMessage              `bun:"result,type:jsonb"`
	Progress   *resources.OperationProgress `bun:"progress,type:jsonb"`
	Retry      *resources.OperationRetry    `bun:"retry,type:jsonb"`
	ProjectID  *int64                       `bun:"project_id"`
	Version    *string                      `bun:"version"`
	TargetEnv  *string                      `bun:"target_env"`
	CreatedAt  time.Time                    `bun:"created_at"`
	UpdatedAt  time.Time                    `bun:"updated_at"`
	FinishedAt *time.Time                   `bun:"finished_at"`
}

// operation shows the row as GET /operations/{id} does: through the same
// conversions as operationRow and ReleaseOperation.
func (r operationListRow) operation() resources.Operation {
	if r.Release {
		rel := resources.ReleaseOperation{ID: r.ID, Kind: r.Kind, Status: r.Status,
			Version: r.Version, Error: r.Error, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
			FinishedAt: r.FinishedAt}
		if r.ProjectID != nil {
			rel.ProjectID = *r.ProjectID
		}
		if r.TargetEnv != nil {
			rel.TargetEnv = *r.TargetEnv
		}
		return rel.Operation()
	}
	return operationRow{ID: r.ID, Kind: r.Kind, Status: r.Status, TargetType: r.TargetType,
		TargetID: r.TargetID, Error: r.Error, Result: r.Result, Progress: r.Progress,
		Retry: r.Retry, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt}.operation()
}

// The columns of the two branches, in one order (UNION ALL matches them by
// position): operationListRow's.
const (
	operationsColumns = `o.id, false AS is_release, o.kind, o.status, o.target_type, o.target_id,
		o.error, o.result, o.progress, o.retry, NULL::bigint AS project_id, NULL::text AS version,
		NULL::text AS target_env, o.created_at, o.updated_at, o.finished_at`
	releaseColumns = `r.id, true AS is_release, r.kind, r.status, 'project' AS target_type,
		r.project_id::text AS target_id, r.error, NULL::jsonb AS result, NULL::jsonb AS progress,
		NULL::jsonb AS retry, r.project_id, r.version, r.target_env, r.created_at, r.updated_at, r.finished_at`
)

// operationsKey is where a page of the list of every operation continues:
// after the operation created at at with the id (a release operation's when
// release). Rows are ordered by created_at, then release operations before
// the others, then id, all descending.
type operationsKey struct {
	at      time.Time
	release bool
	id      int64
}

func parseOperationsKey(after []string) (*operationsKey, error) {
	if after == nil {
		return nil, nil
	}
	if len(after) != 2 {
		return nil, errBadKey
	}
	at, err := time.Parse(time.RFC3339Nano, after[0])
	if err != nil {
		return nil, errBadKey
	}
	if rid, ok := resources.ReleaseOperationID(after[1]); ok {
		return &operationsKey{at: at, release: true, id: rid}, nil
	}
	id, err := strconv.ParseInt(after[1], 10, 64)
	if err != nil {
		return nil, errBadKey
	}
	return &operationsKey{at: at, id: id}, nil
}

// ListOperations lists operations of every kind newest first in one query:
// a UNION ALL of the operations and the release operations, each branch
// ordered by its (created_at, id) index, started after the page key and
// limited to the page, merged in the same order.
func (s *Store) ListOperations(ctx context.Context, f resources.OperationFilter,
	q resources.PageQuery) (resources.Page[resources.Operation], error) {
	key, err := parseOperationsKey(q.After)
	if err != nil {
		return resources.Page[resources.Operation]{}, err
	}
	var branches []*bun.SelectQuery
	for _, b := range []func(resources.OperationFilter, *operationsKey) *bun.SelectQuery{
		s.releaseBranch, s.operationsBranch} {
		if sel := b(f, key); sel != nil {
			branches = append(branches, sel.Limit(int64(q.Limit+1)))
		}
	}
	if len(branches) == 0 {
		return resources.Page[resources.Operation]{Items: []resources.Operation{}}, nil
	}
	sel := branches[0]
	if len(branches) == 2 {
		sel = s.db.NewSelect().TableExpr("((?) UNION ALL (?)) AS u", branches[0], branches[1]).
			ColumnExpr("u.*").OrderExpr("u.created_at DESC, u.is_release DESC, u.id DESC")
	}
	pg, err := scanPage(ctx, sel, q.Limit, operationListRow.operation,
		func(op resources.Operation) []string {
			return []string{op.CreatedAt.UTC().Format(time.RFC3339Nano), op.ID}
		})
	if err != nil {
		return pg, fmt.Errorf("list operations: %w", err)
	}
	return pg, nil
}

// operationsBranch selects the operations rows f asks for after key, or
// nil when f excludes all of them.
func (s *Store) operationsBranch(f resources.OperationFilter, key *operationsKey) *bun.SelectQuery {
	var kinds []string
	for _, k := range f.Kinds {
		if _, rel := resources.ReleaseOperationKinds[k]; !rel {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	sel := s.db.NewSelect().TableExpr("operations AS o").ColumnExpr(operationsColumns).
		Where("o.kind IN (?)", bun.List(kinds)).OrderExpr("o.created_at DESC, o.id DESC")
	if len(f.TargetType) > 0 {
		sel.Where("o.target_type IN (?)", bun.List(f.TargetType))
	}
	if f.TargetID != "" {
		sel.Where("o.target_id = ?", f.TargetID)
	}
	return commonOperationFilters(sel, "o", f, key, false)
}

// releaseBranch selects the release operations f asks for after key, or nil
// when f excludes all of them (their target is always a project).
func (s *Store) releaseBranch(f resources.OperationFilter, key *operationsKey) *bun.SelectQuery {
	var kinds []string
	for _, k := range f.Kinds {
		if rk, rel := resources.ReleaseOperationKinds[k]; rel {
			kinds = append(kinds, rk)
		}
	}
	project, err := strconv.ParseInt(f.TargetID, 10, 64)
	aProject := err == nil && project > 0 && strconv.FormatInt(project, 10) == f.TargetID
	if len(kinds) == 0 || (len(f.TargetType) > 0 && !slices.Contains(f.TargetType, "project")) ||
		(f.TargetID != "" && !aProject) {
		return nil
	}
	sel := s.db.NewSelect().TableExpr("release_operations AS r").ColumnExpr(releaseColumns).
		Where("r.kind IN (?)", bun.List(kinds)).OrderExpr("r.created_at DESC, r.id DESC")
	if f.TargetID != "" {
		sel.Where("r.project_id = ?", project)
	}
	return commonOperationFilters(sel, "r", f, key, true)
}

// commonOperationFilters narrows a branch (table alias t, holding release
// operations when release) by status and since, and starts it after key.
func commonOperationFilters(sel *bun.SelectQuery, t string, f resources.OperationFilter,
	key *operationsKey, release bool) *bun.SelectQuery {
	if len(f.Status) > 0 {
		sel.Where("?.status IN (?)", bun.Ident(t), bun.List(f.Status))
	}
	if f.Since != nil {
		sel.Where("?.created_at >= ?", bun.Ident(t), *f.Since)
	}
	switch {
	case key == nil:
	case key.release == release:
		sel.Where("(?.created_at, ?.id) < (?, ?)", bun.Ident(t), bun.Ident(t), key.at, key.id)
	case release: // at one instant release operations come first: all before the key
		sel.Where("?.created_at < ?", bun.Ident(t), key.at)
	default: // and the others after them: all after the key
		sel.Where("?.created_at <= ?", bun.Ident(t), key.at)
	}
	return sel
}

package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// releaseRow is the bun model of release_operations; its JSON form is the
// audit state.
type releaseRow struct {
	bun.BaseModel `bun:"table:release_operations"`
	ID            int64                     `bun:"id,pk,autoincrement" json:"id"`
	ProjectID     int64                     `bun:"project_id" json:"project_id"`
	Kind          string                    `bun:"kind" json:"kind"`
	Component     *string                   `bun:"component" json:"component"`
	SourceEnv     *string                   `bun:"source_env" json:"source_env"`
	TargetEnv     string                    `bun:"target_env" json:"target_env"`
	Version       *string                   `bun:"version" json:"version"`
	Status        string                    `bun:"status" json:"status"`
	RequestedBy   string                    `bun:"requested_by" json:"requested_by"`
	RequestedVia  string                    `bun:"requested_via" json:"requested_via"`
	Requesters    []int64                   `bun:"requesters,array" json:"requesters"`
	Decision      *resources.Decision       `bun:"decision,type:jsonb" json:"decision"`
	Error         *resources.OperationError `bun:"error,type:jsonb" json:"error"`
	DispatchedAt  *time.Time                `bun:"dispatched_at" json:"dispatched_at"`
	CreatedAt     time.Time                 `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time                 `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	FinishedAt    *time.Time                `bun:"finished_at" json:"finished_at"`
	// The project's short name and customer: read by selectReleases (or
	// set from the project at hand), never written.
	ProjectShortName string `bun:"project_short_name,scanonly" json:"-"`
	CustomerID       int64  `bun:"customer_id,scanonly" json:"-"`
}

func (r releaseRow) release() resources.ReleaseOperation {
	return resources.ReleaseOperation{ID: r.ID, ProjectID: r.ProjectID, ProjectShortName: r.ProjectShortName,
		CustomerID: r.CustomerID, Kind: r.Kind, Component: r.Component,
		SourceEnv: r.SourceEnv, TargetEnv: r.TargetEnv, Version: r.Version, Status: r.Status, RequestedBy: r.RequestedBy,
		RequestedVia: r.RequestedVia, Requesters: r.Requesters, Decision: r.Decision, Error: r.Error,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt}
}

// changeAt is the instant a release operation r is decided or ends: the
// store's clock (frozen with --frozen-clock, moved by tests), at the
// database's precision, but never before r's last change, which the
// database's clock stamped; so created_at <= updated_at = decision.at or
// finished_at however the two clocks stand.
func (s *Store) changeAt(r *releaseRow) time.Time {
	at := s.now()
	if at.Before(r.UpdatedAt) {
		return r.UpdatedAt.UTC()
	}
	return at
}

// saveRelease writes every column of a release operation. updated_at is the
// transaction's time (updateRow), or, when the change finished the operation,
// its finished_at exactly: an operation is last updated when it finishes.
func saveRelease(ctx context.Context, tx bun.IDB, r *releaseRow) error {
	if r.FinishedAt == nil {
		return updateRow(ctx, tx, r)
	}
	return stampRelease(ctx, tx, r, *r.FinishedAt)
}

// stampRelease writes every column of a release operation with updated_at
// at exactly (the instant changeAt gave the change).
func stampRelease(ctx context.Context, tx bun.IDB, r *releaseRow, at time.Time) error {
	_, err := tx.NewUpdate().Model(r).Value("updated_at", "?", at).WherePK().
		Returning("updated_at, finished_at").Exec(ctx)
	return err
}

func releaseByID(ctx context.Context, db bun.IDB, id int64, lock string) (*releaseRow, error) {
	return rowByID[releaseRow](ctx, db, id, lock,
		resources.NotFound(resources.CodeReleaseOperationNotFound, "no release operation %d", id))
}

// GetReleaseOperation reads one release operation.
func (s *Store) GetReleaseOperation(ctx context.Context, id int64) (*resources.ReleaseOperation, error) {
	row := new(releaseRow)
	if err := selectReleases(s.db).Where("?TableAlias.id = ?", id).Scan(ctx, row); err != nil {
		if noRows(err) {
			return nil, resources.NotFound(resources.CodeReleaseOperationNotFound, "no release operation %d", id)
		}
		return nil, fmt.Errorf("read release operation %d: %w", id, err)
	}
	r := row.release()
	return &r, nil
}

// ListReleaseOperations lists a project's release operations newest first
// (created_at, id), data copies included unless a component is asked for;
// an unknown project has none (the API answers its 404 first).
func (s *Store) ListReleaseOperations(ctx context.Context, projectID int64, f resources.ReleaseFilter,
	q resources.PageQuery) (resources.Page[resources.ReleaseOperation], error) {
	f.ProjectID = projectID
	return s.listReleases(ctx, f, q)
}

// RequestPromotion applies the promotion rules and records the promotion:
// dev and uat are queued at once, prod awaits a person's approval. With a
// lease resumed past that point it returns the promotion already booked.
func (s *Store) RequestPromotion(ctx context.Context, a resources.Actor, requesters []int64, projectID int64,
	r resources.PromotionRequest, l *resources.Lease) (resources.ReleaseOperation, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryPromotion); err != nil || resumed {
		return resumeCreate(ctx, id, err, s.GetReleaseOperation)
	}
	var out resources.ReleaseOperation
	err := s.inTx(ctx, func(tx bun.Tx) error {
		row, err := s.bookPromotion(ctx, tx, a, requesters, projectID, r)
		if err != nil {
			return err
		}
		out = row.release()
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "release.request", entityType: "release_operation",
			entityID: idString(row.ID), after: row},
			recovery{lease: l, point: resources.RecoveryPromotion, data: createdID{row.ID}, result: out})
	})
	return out, err
}

func (s *Store) bookPromotion(ctx context.Context, tx bun.Tx, a resources.Actor, requesters []int64, projectID int64,
	r resources.PromotionRequest) (*releaseRow, error) {
	p, err := projectByID(ctx, tx, projectID, "SHARE")
	if err != nil {
		return nil, err
	}
	if p.Platform {
		return nil, p.project().CheckWritable()
	}
	source, err := deploymentOf(ctx, tx, projectID, resources.SourceEnv(r.TargetEnv), r.Component)
	if err != nil {
		return nil, err
	}
	version, err := resources.PlanPromotion(p.project(), r, source)
	if err != nil {
		return nil, err
	}
	row := &releaseRow{ProjectID: projectID, ProjectShortName: p.ShortName, CustomerID: p.CustomerID,
		Kind: resources.ReleasePromotion, Component: &r.Component,
		SourceEnv: nonEmpty(resources.SourceEnv(r.TargetEnv)), TargetEnv: r.TargetEnv, Version: &version,
		Status: resources.OpPending, RequestedBy: a.Label, RequestedVia: resources.RequestedViaAPI, Requesters: requesters}
	if r.TargetEnv == resources.EnvProd {
		row.Status = resources.OpAwaitingApproval
	}
	if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx); err != nil {
		return nil, err
	}
	if row.Status == resources.OpPending {
		return row, s.enqueue(ctx, tx, promotionArgs{ReleaseOperationID: row.ID})
	}
	return row, nil
}

// deploymentOf is the last version reported for env and component, or nil.
func deploymentOf(ctx context.Context, db bun.IDB, projectID int64, env, component string) (*resources.Deployment, error) {
	if env == "" {
		return nil, nil
	}
	var d resources.Deployment
	err := db.NewRaw(`SELECT version, reported_at, reported_by FROM deployments WHERE project_id = ? AND env = ? AND component = ?`,
		projectID, env, component).Scan(ctx, &d.Version, &d.ReportedAt, &d.ReportedBy)
	if noRows(err) {
		return nil, nil
	}
	return &d, err
}

package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// ReportDeploy records what a release pipeline reports: on success the
// deployed version for the environment and component (when and by whom) and
// the promotion succeeded; on failure the promotion failed with the reason.
// A report for a finished promotion changes nothing (pipelines may repeat).
func (s *Store) ReportDeploy(ctx context.Context, r resources.DeployReport) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		rel, err := reportedRelease(ctx, tx, r)
		if err != nil || resources.Finished(rel.Status) {
			return err
		}
		actor := resources.Actor{Label: r.By}
		if !r.Succeeded {
			reason := r.Reason
			if reason == "" {
				reason = "the release pipeline reported a failure"
			}
			return s.endPromotion(ctx, tx, rel.ID, actor, &resources.OperationError{Code: "pipeline_failed", Detail: reason}, nil)
		}
		d := resources.Deployment{Version: *rel.Version, ReportedAt: time.Now().UTC(), ReportedBy: r.By}
		if _, err := tx.NewRaw(`INSERT INTO deployments (project_id, env, component, version, reported_at, reported_by)
			VALUES (?, ?, ?, ?, now(), ?) ON CONFLICT (project_id, env, component) DO UPDATE
			SET version = EXCLUDED.version, reported_at = EXCLUDED.reported_at, reported_by = EXCLUDED.reported_by`,
			rel.ProjectID, rel.TargetEnv, *rel.Component, d.Version, d.ReportedBy).Exec(ctx); err != nil {
			return err
		}
		return s.endPromotion(ctx, tx, rel.ID, actor, nil, &d)
	})
}

// reportedRelease finds the promotion a report is about: by id, else the
// oldest running promotion of that project, env, component and version. A
// report by id is refused for anything but a promotion that was queued for
// the pipeline (pending, running) or has finished: a prod promotion awaiting
// approval must never be ended by a report, and a data copy has no version.
func reportedRelease(ctx context.Context, tx bun.Tx, r resources.DeployReport) (*releaseRow, error) {
	if r.ReleaseOperationID != 0 {
		row, err := releaseByID(ctx, tx, r.ReleaseOperationID, "UPDATE")
		if err != nil || resources.Finished(row.Status) {
			return row, err
		}
		if row.Kind != resources.ReleasePromotion || (row.Status != resources.OpPending && row.Status != resources.OpRunning) {
			return nil, resources.Errorf(resources.KindConflict, resources.CodeReleaseNotDispatched,
				"release operation %d is a %s that is %s, not a promotion sent to a pipeline", row.ID, row.Kind, row.Status)
		}
		return row, nil
	}
	row := &releaseRow{}
	err := tx.NewSelect().Model(row).Where("project_id = ? AND kind = 'promotion' AND target_env = ? AND component = ? AND version = ?",
		r.ProjectID, r.Env, r.Component, r.Version).Where("status IN ('pending', 'running')").
		OrderExpr("created_at, id").Limit(1).For("UPDATE").Scan(ctx)
	if noRows(err) {
		return nil, resources.NotFound(resources.CodeReleaseOperationNotFound,
			"no open promotion of %s to %s at version %s in project %d", r.Component, r.Env, r.Version, r.ProjectID)
	}
	return row, err
}

// endPromotion finishes a promotion, succeeded (deployed) or failed, and
// records the event.
func (s *Store) endPromotion(ctx context.Context, tx bun.Tx, id int64, actor resources.Actor,
	opErr *resources.OperationError, deployed *resources.Deployment) error {
	before, err := releaseByID(ctx, tx, id, "UPDATE")
	if err != nil || resources.Finished(before.Status) {
		return err
	}
	after := *before
	now := time.Now().UTC()
	after.Status, after.Error, after.FinishedAt = resources.OpSucceeded, opErr, &now
	if opErr != nil {
		after.Status = resources.OpFailed
	}
	if err := updateRow(ctx, tx, &after); err != nil {
		return err
	}
	return writeAudit(ctx, tx, auditEntry{actor: actor, action: "release.deploy_report", entityType: "release_operation",
		entityID: idString(id), before: before, after: map[string]any{"release_operation": &after, "deployment": deployed}})
}

var _ resources.ReleaseDesk = (*Store)(nil)
var _ resources.Releases = (*Store)(nil)
var _ resources.Projects = (*Store)(nil)
var _ resources.Operations = (*Store)(nil)

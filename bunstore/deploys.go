package bunstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// ReportDeploy records what a release pipeline reports, whatever started
// the deploy: on success the deployed version for the environment and
// component (when and by whom), and the matching open promotion, if any,
// succeeded; on failure that promotion failed with the reason. A success
// that no open promotion accounts for (a deploy started in the portal or by
// a push) is recorded all the same; a failure without one changes nothing
// (404 release_operation_not_found). A report for a finished promotion
// changes nothing (pipelines may repeat).
func (s *Store) ReportDeploy(ctx context.Context, r resources.DeployReport) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		rel, err := reportedRelease(ctx, tx, r)
		if err != nil || (rel != nil && resources.Finished(rel.Status)) {
			return err
		}
		actor := resources.Actor{Label: r.By}
		if rel == nil {
			return s.recordUnmatchedDeploy(ctx, tx, actor, r)
		}
		if !r.Succeeded {
			reason := r.Reason
			if reason == "" {
				reason = "the release pipeline reported a failure"
			}
			return s.endPromotion(ctx, tx, rel.ID, promotionEnd{action: actionDeployReport, actor: actor,
				err: &resources.OperationError{Code: resources.CodePipelineFailed, Detail: reason}})
		}
		d, err := upsertDeployment(ctx, tx, rel.ProjectID, rel.TargetEnv, *rel.Component, *rel.Version, r.By)
		if err != nil {
			return err
		}
		return s.endPromotion(ctx, tx, rel.ID,
			promotionEnd{action: actionDeployReport, actor: actor, deployed: &d})
	})
}

// upsertDeployment records version as what env runs of component, reported
// now by by.
func upsertDeployment(ctx context.Context, tx bun.Tx, projectID int64,
	env, component, version, by string) (resources.Deployment, error) {
	d := resources.Deployment{Version: version, ReportedBy: by}
	err := tx.NewRaw(`INSERT INTO deployments (project_id, env, component, version, reported_at, reported_by)
		VALUES (?, ?, ?, ?, now(), ?) ON CONFLICT (project_id, env, component) DO UPDATE
		SET version = EXCLUDED.version, reported_at = EXCLUDED.reported_at, reported_by = EXCLUDED.reported_by
		RETURNING reported_at`, projectID, env, component, version, by).Scan(ctx, &d.ReportedAt)
	d.ReportedAt = d.ReportedAt.UTC()
	return d, err
}

// recordUnmatchedDeploy records a successful deploy no open promotion
// accounts for, audited on the project with what the environment ran before.
func (s *Store) recordUnmatchedDeploy(ctx context.Context, tx bun.Tx, actor resources.Actor, r resources.DeployReport) error {
	p, err := projectByID(ctx, tx, r.ProjectID, "SHARE")
	if err != nil {
		return err
	}
	if err := resources.CheckUnmatchedDeploy(p.project(), r); err != nil {
		return err
	}
	var before []resources.Deployment
	if err := tx.NewRaw(`SELECT version, reported_at, reported_by FROM deployments
		WHERE project_id = ? AND env = ? AND component = ? FOR UPDATE`, r.ProjectID, r.Env, r.Component).
		Scan(ctx, &before); err != nil {
		return err
	}
	d, err := upsertDeployment(ctx, tx, r.ProjectID, r.Env, r.Component, r.Version, r.By)
	if err != nil {
		return err
	}
	state := func(d *resources.Deployment) map[string]any {
		return map[string]any{"env": r.Env, "component": r.Component, "deployment": d}
	}
	var was *resources.Deployment
	if len(before) > 0 {
		was = &before[0]
	}
	return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: actionDeployReport, entityType: "project",
		entityID: idString(r.ProjectID), before: state(was), after: state(&d)})
}

// reportedRelease finds the promotion a report is about: by id, else the
// oldest running promotion of that project, env, component and version. A
// report by id is refused for anything but a promotion that was queued for
// the pipeline (pending, running) or has finished: a prod promotion awaiting
// approval must never be ended by a report, and a data copy has no version.
// A successful report without an id that matches no open promotion gives
// (nil, nil): the deploy was started elsewhere.
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
	switch {
	case noRows(err) && r.Succeeded:
		return nil, nil
	case noRows(err):
		return nil, resources.NotFound(resources.CodeReleaseOperationNotFound,
			"no open promotion of %s to %s at version %s in project %d; a failure of a deploy the platform did not "+
				"start changes nothing", r.Component, r.Env, r.Version, r.ProjectID)
	}
	return row, err
}

// Audit actions of a promotion's end: what a pipeline reported (or its
// refusal of the dispatch), and the platform failing a promotion by itself
// (its project was retired before the dispatch).
const (
	actionDeployReport = "release.deploy_report"
	actionReleaseFail  = "release.fail"
)

// promotionEnd is how a promotion ends: failed with err, else succeeded
// (deployed: what the environment now runs), audited as action by actor.
type promotionEnd struct {
	action   string
	actor    resources.Actor
	err      *resources.OperationError
	deployed *resources.Deployment
}

// endPromotion finishes a promotion as e says and records the event; an
// ended promotion stays as it is.
func (s *Store) endPromotion(ctx context.Context, tx bun.Tx, id int64, e promotionEnd) error {
	before, err := releaseByID(ctx, tx, id, "UPDATE")
	if err != nil || resources.Finished(before.Status) {
		return err
	}
	after := *before
	at := s.changeAt(before)
	after.Status, after.Error, after.FinishedAt = resources.OpSucceeded, e.err, &at
	if e.err != nil {
		after.Status = resources.OpFailed
	}
	if err := saveRelease(ctx, tx, &after); err != nil {
		return fmt.Errorf("end release operation %d: %w", id, err)
	}
	return s.writeAudit(ctx, tx, auditEntry{actor: e.actor, action: e.action,
		entityType: "release_operation", entityID: idString(id), before: before,
		after: map[string]any{"release_operation": &after, "deployment": e.deployed}})
}

var _ resources.ReleaseDesk = (*Store)(nil)
var _ resources.Releases = (*Store)(nil)
var _ resources.Projects = (*Store)(nil)
var _ resources.Operations = (*Store)(nil)

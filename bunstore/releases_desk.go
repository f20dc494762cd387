package bunstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

var releaseDeciders = []string{resources.PermReleasesWrite, resources.PermAdmin}

// ApproveRelease lets a person approve a prod promotion awaiting approval (a
// requester only with a note); the promotion is then queued. A promotion of
// a retired project is refused (409 project_retired): the project's row is
// share-locked, so a retirement and an approval never cross.
func (s *Store) ApproveRelease(ctx context.Context, by resources.Actor, id int64, note string) (resources.ReleaseOperation, error) {
	approve := func(tx bun.Tx, actor resources.Actor, r *releaseRow) error {
		p, err := projectByID(ctx, tx, r.ProjectID, "SHARE")
		if err != nil {
			return fmt.Errorf("read the project of release operation %d: %w", r.ID, err)
		}
		if err := resources.CheckApproval(r.release(), p.project(), *actor.UserID, note); err != nil {
			return err
		}
		r.Status = resources.OpPending
		r.Decision = &resources.Decision{Outcome: "approved", By: actor.Label, At: s.changeAt(r),
			Note: nonEmpty(note)}
		return nil
	}
	return s.decide(ctx, by, id, "release.approve", approve)
}

// RejectRelease ends a prod promotion awaiting approval as failed, with the
// reason.
func (s *Store) RejectRelease(ctx context.Context, by resources.Actor, id int64, reason string) (resources.ReleaseOperation, error) {
	reject := func(_ bun.Tx, actor resources.Actor, r *releaseRow) error {
		if reason == "" {
			return resources.Invalid("reason", resources.CodeValidationFailed, "a rejection needs a reason")
		}
		if r.Status != resources.OpAwaitingApproval {
			return resources.Errorf(resources.KindConflict, resources.CodeNotAwaitingApproval,
				"release operation %d is %s, not awaiting approval", r.ID, r.Status)
		}
		at := s.changeAt(r)
		r.Status, r.FinishedAt = resources.OpFailed, &at
		r.Decision = &resources.Decision{Outcome: "rejected", By: actor.Label, At: at, Reason: &reason}
		r.Error = &resources.OperationError{Code: resources.CodeReleaseRejected, Detail: reason}
		return nil
	}
	return s.decide(ctx, by, id, "release.reject", reject)
}

// decide locks a release operation, applies a person's decision, queues an
// approved promotion and records the event, in one transaction; the row's
// updated_at is the decision's at.
func (s *Store) decide(ctx context.Context, by resources.Actor, id int64, action string,
	apply func(bun.Tx, resources.Actor, *releaseRow) error) (resources.ReleaseOperation, error) {
	var out resources.ReleaseOperation
	err := s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := sessionActor(ctx, tx, by, releaseDeciders...)
		if err != nil {
			return err
		}
		before, err := releaseByID(ctx, tx, id, "UPDATE")
		if err != nil {
			return err
		}
		after := *before
		if err := apply(tx, actor, &after); err != nil {
			return err
		}
		if err := stampRelease(ctx, tx, &after, after.Decision.At); err != nil {
			return fmt.Errorf("%s of release operation %d: %w", action, id, err)
		}
		if after.Status == resources.OpPending {
			if err := s.enqueue(ctx, tx, promotionArgs{ReleaseOperationID: id}); err != nil {
				return err
			}
		}
		if err := projectOfRelease(ctx, tx, &after); err != nil {
			return err
		}
		out = after.release()
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: action, entityType: "release_operation",
			entityID: idString(id), before: before, after: &after})
	})
	return out, err
}

// BookDataCopy books a data copy between environments for an operator; a
// copy into PROD is refused while the PROD data lock is set.
func (s *Store) BookDataCopy(ctx context.Context, by resources.Actor, projectID int64, from, to string) (resources.ReleaseOperation, error) {
	if err := resources.CheckDataCopy(from, to); err != nil {
		return resources.ReleaseOperation{}, err
	}
	var out resources.ReleaseOperation
	err := s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := sessionActor(ctx, tx, by, releaseDeciders...)
		if err != nil {
			return err
		}
		p, err := projectByID(ctx, tx, projectID, "SHARE")
		if err != nil {
			return err
		}
		if err := p.project().CheckWritable(); err != nil {
			return err
		}
		if lock, err := prodLockOf(ctx, tx, projectID, "SHARE"); err != nil || (to == resources.EnvProd && lock.Locked) {
			return errOr(err, resources.Errorf(resources.KindConflict, resources.CodeProdLocked,
				"the PROD data lock of project %d (%s) is set: unlock it with PUT /api/v1/projects/%d/prod-lock "+
					`{"locked": false, "confirm_unlock": %q} first`, projectID, p.ShortName, projectID, p.ShortName))
		}
		row := &releaseRow{ProjectID: projectID, ProjectShortName: p.ShortName, CustomerID: p.CustomerID,
			Kind: resources.ReleaseDataCopy, SourceEnv: &from, TargetEnv: to,
			Status: resources.OpAwaitingOperator, RequestedBy: actor.Label, RequestedVia: resources.RequestedViaPortal,
			Requesters: []int64{*actor.UserID}}
		if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx); err != nil {
			return err
		}
		out = row.release()
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: "release.data_copy_book", entityType: "release_operation",
			entityID: idString(row.ID), after: row})
	})
	return out, err
}

// promotionWorker dispatches a queued promotion to the release pipeline; the
// pipeline's report (ReportDeploy) ends it.
type promotionWorker struct {
	river.WorkerDefaults[promotionArgs]
	store    *Store
	pipeline resources.ReleasePipeline
}

// Work marks the promotion running and dispatches it; an unavailable
// pipeline is retried later (on the job's last attempt it fails the
// promotion with pipeline_unavailable), a refusing one fails the promotion. Every
// attempt first checks the project: one retired since the promotion was
// queued (or since an attempt the pipeline did not take) ends it failed
// with project_retired, and nothing is sent.
func (w *promotionWorker) Work(ctx context.Context, job *river.Job[promotionArgs]) error {
	var d resources.PromotionDispatch
	skip := false
	err := w.store.inTx(ctx, func(tx bun.Tx) error {
		var err error
		d, skip, err = w.store.startDispatch(ctx, tx, job)
		return err
	})
	if err != nil || skip {
		return err
	}
	err = w.pipeline.Dispatch(ctx, d)
	if err == nil || errors.Is(err, resources.ErrPipelineUnavailable) && job.Attempt < job.MaxAttempts {
		return err
	}
	end := promotionEnd{action: actionDeployReport, actor: systemActor,
		err: &resources.OperationError{Code: resources.CodePipelineRefused, Detail: err.Error()}}
	if errors.Is(err, resources.ErrPipelineUnavailable) { // the last attempt: end it, or it stays running
		end.action, end.err = actionReleaseFail, &resources.OperationError{Code: resources.CodePipelineUnavailable,
			Detail: fmt.Sprintf("the release pipeline could not be reached in %d attempts, so nothing was "+
				"deployed; request the promotion again (last error: %v)", job.Attempt, err)}
	}
	return w.store.inTx(ctx, func(tx bun.Tx) error {
		return errOr(w.store.endPromotion(ctx, tx, job.Args.ReleaseOperationID, end), completeJob(ctx, tx, job))
	})
}

// startDispatch marks the job's promotion running and answers what to send
// the pipeline, or skip when nothing is to be sent: the promotion has ended,
// or its project is retired, which ends it failed here with project_retired
// (audited as the system's release.fail); a skipped job completes in tx.
// The project's row is share-locked, so a retirement waits for a dispatch
// being started and a dispatch started after a retirement sees it.
func (s *Store) startDispatch(ctx context.Context, tx bun.Tx,
	job *river.Job[promotionArgs]) (d resources.PromotionDispatch, skip bool, err error) {
	r, err := releaseByID(ctx, tx, job.Args.ReleaseOperationID, "UPDATE")
	if err != nil {
		return d, false, err
	}
	if r.Status != resources.OpPending && r.Status != resources.OpRunning {
		return d, true, completeJob(ctx, tx, job)
	}
	p, err := projectByID(ctx, tx, r.ProjectID, "SHARE")
	if err != nil {
		return d, false, fmt.Errorf("read the project of release operation %d: %w", r.ID, err)
	}
	if resources.CheckReleasable(p.project()) != nil {
		return d, true, errOr(s.endPromotion(ctx, tx, r.ID, promotionEnd{action: actionReleaseFail,
			actor: systemActor, err: resources.RetiredBeforeDispatch(p.ID)}), completeJob(ctx, tx, job))
	}
	now := s.now().UTC()
	r.Status, r.DispatchedAt = resources.OpRunning, &now
	return dispatchOf(r, p), false, updateRow(ctx, tx, r)
}

// dispatchOf is what the pipeline is sent for promotion r of project p.
func dispatchOf(r *releaseRow, p *projectRow) resources.PromotionDispatch {
	d := resources.PromotionDispatch{ReleaseOperationID: r.ID, ProjectID: r.ProjectID, ProjectShortName: p.ShortName,
		Component: *r.Component, TargetEnv: r.TargetEnv, Version: *r.Version, RequestedBy: r.RequestedBy}
	if r.SourceEnv != nil {
		d.SourceEnv = *r.SourceEnv
	}
	return d
}

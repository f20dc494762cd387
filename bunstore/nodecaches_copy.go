package bunstore

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// cacheCopyWorker carries out a copy through the node's agent: it asks the
// agent to copy (which starts, joins or resumes the copy), records its
// progress, and when the agent reports the cache verified and published,
// turns the cache ready and the model offline-ready in the transaction that
// completes the job. A copy that fails (checksum, disk, central copy, an
// agent unreachable through every retry) drops the half-made cache and
// ends the operation failed. No attempt holds a lock while the agent works.
type cacheCopyWorker struct {
	river.WorkerDefaults[cacheCopyArgs]
	store  *Store
	agents resources.NodeAgents
	policy AgentPolicy
}

// NextRetry backs off while the agent is unreachable.
func (w *cacheCopyWorker) NextRetry(job *river.Job[cacheCopyArgs]) time.Time {
	return w.policy.nextRetry(job.Errors)
}

// Work runs one attempt: it watches the copy for at most the policy's
// watch time, then snoozes (which costs no attempt) and looks again.
func (w *cacheCopyWorker) Work(ctx context.Context, job *river.Job[cacheCopyArgs]) error {
	task, err := w.store.beginCopy(ctx, job)
	if err != nil || task == nil {
		return err
	}
	deadline := time.Now().Add(w.policy.watch())
	for {
		if stopped, err := w.store.copyStopped(ctx, job); err != nil || stopped {
			return err
		}
		c, err := w.agents.Copy(ctx, task.hostname, task.repo, task.source)
		if ctx.Err() != nil {
			return ctx.Err() // stopped or timed out: not the agent's fault
		}
		if err != nil {
			opErr, retry := agentOutcome(err, job.Errors, w.policy)
			if opErr == nil {
				return w.store.retryAgent(ctx, job.Args.OperationID, retry, job.Errors, w.policy)
			}
			return w.store.endCopy(ctx, job, nil, opErr)
		}
		switch c.State {
		case resources.AgentCacheReady:
			return w.store.endCopy(ctx, job, &c, nil)
		case resources.AgentCacheFailed:
			return w.store.endCopy(ctx, job, nil, failedCopyError(c))
		}
		if err := w.store.noteProgress(ctx, job.Args.OperationID, task, c); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return river.JobSnooze(w.policy.poll())
		}
		if err := sleepCtx(ctx, w.policy.poll()); err != nil {
			return err
		}
	}
}

// failedCopyError is the operation error of a copy its agent reports
// failed.
func failedCopyError(c resources.AgentCache) *resources.OperationError {
	if c.Error == nil {
		return agentError("", "the node agent reports the copy failed without saying why")
	}
	return agentError(c.Error.Code, c.Error.Detail)
}

// noteProgress records the copy's bytes when they moved, or when the
// operation still shows a retry (the agent answered: it no longer waits).
func (s *Store) noteProgress(ctx context.Context, opID int64, task *cacheTask, c resources.AgentCache) error {
	p := resources.OperationProgress{BytesDone: c.BytesDone, BytesTotal: c.BytesTotal}
	if p == task.progress && !task.retrying {
		return nil
	}
	task.progress, task.retrying = p, false
	return s.setProgress(ctx, opID, p)
}

// beginCopy reads what the copy needs and marks it running; nil (with the
// job completed) when there is nothing left to do.
func (s *Store) beginCopy(ctx context.Context, job *river.Job[cacheCopyArgs]) (*cacheTask, error) {
	var task *cacheTask
	err := s.inTx(ctx, func(tx bun.Tx) error {
		cw, err := lockCacheWork(ctx, tx, job.Args.OperationID)
		if err != nil || cw == nil {
			return errOr(err, completeJob(ctx, tx, job))
		}
		if cw.model.NASVolume == nil || cw.model.NASPath == nil || cw.cache == nil ||
			cw.cache.Status != resources.NodeCacheCopying {
			return s.endCopyTx(ctx, tx, job, cw, nil, &resources.OperationError{Code: resources.CodeAIModelNotInStore,
				Detail: "the model's central copy or the cache record is gone; nothing was copied"})
		}
		source, err := resources.AgentSource(*cw.model.NASPath)
		if err != nil {
			e, _ := resources.AsError(err)
			return s.endCopyTx(ctx, tx, job, cw, nil, agentError(e.Code, e.Detail))
		}
		task = &cacheTask{hostname: cw.hostname, repo: cw.model.Repo, source: source, retrying: cw.op.Retry != nil}
		if cw.op.Progress != nil {
			task.progress = *cw.op.Progress
		}
		return markRunning(ctx, tx, cw.op)
	})
	if task == nil {
		return nil, err
	}
	return task, err
}

// endCopy ends a copy: ready with the agent's cache, or failed with opErr.
func (s *Store) endCopy(ctx context.Context, job *river.Job[cacheCopyArgs], c *resources.AgentCache,
	opErr *resources.OperationError) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		cw, err := lockCacheWork(ctx, tx, job.Args.OperationID)
		if err != nil || cw == nil {
			return errOr(err, completeJob(ctx, tx, job))
		}
		if opErr == nil && (cw.cache == nil || cw.cache.Status != resources.NodeCacheCopying) {
			opErr = &resources.OperationError{Code: resources.CodeConflict,
				Detail: "the cache record changed while the node copied; nothing was recorded"}
		}
		return s.endCopyTx(ctx, tx, job, cw, c, opErr)
	})
}

// endCopyTx records the end of a copy in tx and completes the job.
func (s *Store) endCopyTx(ctx context.Context, tx bun.Tx, job *river.Job[cacheCopyArgs], cw *cacheWork,
	c *resources.AgentCache, opErr *resources.OperationError) error {
	before := cacheAudit(cw.cache, cw.model)
	if opErr != nil {
		return s.failCopy(ctx, tx, job, cw, opErr, before)
	}
	size := gigabytes(c.BytesTotal)
	cw.cache.Status, cw.cache.Path, cw.cache.SizeGB = resources.NodeCacheReady, &c.Path, &size
	if err := updateRow(ctx, tx, cw.cache); err != nil {
		return err
	}
	cw.op.Progress = &resources.OperationProgress{BytesDone: c.BytesTotal, BytesTotal: c.BytesTotal}
	if err := s.finishCacheWork(ctx, tx, cw, "node_cache.ready", before); err != nil {
		return err
	}
	return completeJob(ctx, tx, job)
}

// failCopy drops the half-made cache, ends the operation failed, records
// the event and completes the job.
func (s *Store) failCopy(ctx context.Context, tx bun.Tx, job *river.Job[cacheCopyArgs], cw *cacheWork,
	opErr *resources.OperationError, before cacheAuditState) error {
	if cw.cache != nil && cw.cache.Status == resources.NodeCacheCopying {
		if _, err := tx.NewDelete().Model(cw.cache).WherePK().Exec(ctx); err != nil {
			return err
		}
		cw.cache = nil
	}
	result := map[string]any{"hostname": cw.hostname, "model_id": idString(cw.model.ID), "status": "failed"}
	if err := finishOperation(ctx, tx, cw.op, opErr, result); err != nil {
		return err
	}
	event := auditEntry{actor: systemActor, action: "node_cache.copy_failed", entityType: "node_cache",
		entityID: cw.op.TargetID, before: before, after: cacheAudit(cw.cache, cw.model)}
	if err := s.writeAudit(ctx, tx, event); err != nil {
		return err
	}
	return completeJob(ctx, tx, job)
}

// gigabytes is a byte count in GB (10^9 bytes), as size_gb members are.
func gigabytes(n int64) float64 { return float64(n) / 1e9 }

// systemActor is who records what the platform did by itself.
var systemActor = resources.Actor{Label: "system"}

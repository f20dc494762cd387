package bunstore

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// cacheRemoveWorker carries out a removal through the node's agent, which
// deletes the cache directory; then the cache row goes, the model's
// offline_ready and location are recomputed and the operation succeeds,
// in the transaction that completes the job. When the agent stays
// unreachable the cache gets its former status back and the operation
// fails.
type cacheRemoveWorker struct {
	river.WorkerDefaults[cacheRemoveArgs]
	store  *Store
	agents resources.NodeAgents
	policy AgentPolicy
}

// NextRetry backs off while the agent is unreachable.
func (w *cacheRemoveWorker) NextRetry(job *river.Job[cacheRemoveArgs]) time.Time {
	return w.policy.nextRetry(job.Errors)
}

// Work runs one attempt.
func (w *cacheRemoveWorker) Work(ctx context.Context, job *river.Job[cacheRemoveArgs]) error {
	task, err := w.store.beginRemove(ctx, job, w.policy.watch()+time.Minute)
	if errors.Is(err, errCopyDriving) {
		return river.JobSnooze(w.policy.poll()) // costs no attempt
	}
	if err != nil || task == nil {
		return err
	}
	err = w.agents.Remove(ctx, task.hostname, task.repo)
	if ctx.Err() != nil {
		return ctx.Err() // stopped or timed out: not the agent's fault
	}
	if err != nil {
		opErr, retry := agentOutcome(err, job.Errors, w.policy)
		if opErr == nil {
			return w.store.retryAgent(ctx, job.Args.OperationID, retry, job.Errors, w.policy)
		}
		return w.store.endRemove(ctx, job, opErr)
	}
	return w.store.endRemove(ctx, job, nil)
}

// errCopyDriving holds a removal back while a stopped copy's job may
// still send the agent a copy request (which would start it again).
var errCopyDriving = errors.New("a stopped copy's job is still running")

// beginRemove reads what the removal needs and marks it running; nil (with
// the job completed) when there is nothing left to do; errCopyDriving
// while a copy job of the cache is in an attempt younger than bound.
func (s *Store) beginRemove(ctx context.Context, job *river.Job[cacheRemoveArgs], bound time.Duration) (*cacheTask, error) {
	var task *cacheTask
	err := s.inTx(ctx, func(tx bun.Tx) error {
		cw, err := lockCacheWork(ctx, tx, job.Args.OperationID)
		if err != nil || cw == nil {
			return errOr(err, completeJob(ctx, tx, job))
		}
		if driving, err := copyStillDriving(ctx, tx, cw.op.TargetID, bound); err != nil || driving {
			return errOr(err, errCopyDriving)
		}
		if cw.cache == nil {
			if err := s.finishCacheWork(ctx, tx, cw, "node_cache.removed", cacheAudit(nil, cw.model)); err != nil {
				return err
			}
			return completeJob(ctx, tx, job)
		}
		task = &cacheTask{hostname: cw.hostname, repo: cw.model.Repo}
		return markRunning(ctx, tx, cw.op)
	})
	if task == nil {
		return nil, err
	}
	return task, err
}

// endRemove deletes the cache row and succeeds, or (opErr) gives the cache
// its former status back and fails.
func (s *Store) endRemove(ctx context.Context, job *river.Job[cacheRemoveArgs], opErr *resources.OperationError) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		cw, err := lockCacheWork(ctx, tx, job.Args.OperationID)
		if err != nil || cw == nil {
			return errOr(err, completeJob(ctx, tx, job))
		}
		before := cacheAudit(cw.cache, cw.model)
		if opErr != nil {
			return s.failRemove(ctx, tx, job, cw, opErr, before)
		}
		if cw.cache != nil {
			if _, err := tx.NewDelete().Model(cw.cache).WherePK().Exec(ctx); err != nil {
				return err
			}
			cw.cache = nil
		}
		if err := s.finishCacheWork(ctx, tx, cw, "node_cache.removed", before); err != nil {
			return err
		}
		return completeJob(ctx, tx, job)
	})
}

// failRemove restores the cache's status from before the removal, ends
// the operation failed and completes the job.
func (s *Store) failRemove(ctx context.Context, tx bun.Tx, job *river.Job[cacheRemoveArgs], cw *cacheWork,
	opErr *resources.OperationError, before cacheAuditState) error {
	if cw.cache != nil && cw.cache.Status == resources.NodeCacheRemoving {
		cw.cache.Status = cmp.Or(job.Args.From, resources.NodeCacheReady)
		if err := updateRow(ctx, tx, cw.cache); err != nil {
			return err
		}
	}
	result := map[string]any{"hostname": cw.hostname, "model_id": idString(cw.model.ID), "status": "not_removed"}
	if err := finishOperation(ctx, tx, cw.op, opErr, result); err != nil {
		return err
	}
	event := auditEntry{actor: systemActor, action: "node_cache.remove_failed", entityType: "node_cache",
		entityID: cw.op.TargetID, before: before, after: cacheAudit(cw.cache, cw.model)}
	if err := s.writeAudit(ctx, tx, event); err != nil {
		return err
	}
	return completeJob(ctx, tx, job)
}

// finishCacheWork recomputes the model's placement, ends the operation as
// succeeded and records the event; the caller completes the job.
func (s *Store) finishCacheWork(ctx context.Context, tx bun.Tx, cw *cacheWork, action string, before any) error {
	if err := placeModel(ctx, tx, cw.model); err != nil {
		return err
	}
	result := map[string]any{"hostname": cw.hostname, "model_id": idString(cw.model.ID), "status": "removed"}
	if cw.cache != nil {
		result = cacheResult(cw.cache, false)
	}
	result["offline_ready"], result["location"] = cw.model.OfflineReady, cw.model.Location
	if err := finishOperation(ctx, tx, cw.op, nil, result); err != nil {
		return err
	}
	return s.writeAudit(ctx, tx, auditEntry{actor: systemActor, action: action,
		entityType: "node_cache", entityID: cw.op.TargetID, before: before, after: cacheAudit(cw.cache, cw.model)})
}

// placeModel sets the model's offline_ready and location from its central
// copy and its ready caches (updated_at moves only when they change).
func placeModel(ctx context.Context, tx bun.Tx, model *cacheModelRow) error {
	ready, err := tx.NewSelect().Model((*nodeCacheRow)(nil)).
		Where("model_id = ? AND status = ?", model.ID, resources.NodeCacheReady).Count(ctx)
	if err != nil {
		return err
	}
	offline, location := resources.ModelPlacement(model.NASVolume != nil, int(ready))
	if offline == model.OfflineReady && equalPtr(location, model.Location) {
		return nil
	}
	model.OfflineReady, model.Location = offline, location
	_, err = tx.NewUpdate().Model(model).Column("offline_ready", "location").Set("updated_at = now()").WherePK().Exec(ctx)
	return err
}

// cacheAuditState is what a cache event records: the cache and the model's
// placement.
type cacheAuditState struct {
	Cache        *nodeCacheRow `json:"node_cache"`
	ModelID      int64         `json:"model_id"`
	OfflineReady bool          `json:"offline_ready"`
	Location     *string       `json:"location"`
	// Reason says why the reconcile changed the cache, when the change
	// alone does not (a cache turned missing because it is corrupt).
	Reason string `json:"reason,omitempty"`
}

func cacheAudit(cache *nodeCacheRow, model *cacheModelRow) cacheAuditState {
	st := cacheAuditState{ModelID: model.ID, OfflineReady: model.OfflineReady, Location: model.Location}
	if cache != nil {
		c := *cache
		st.Cache = &c
	}
	return st
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

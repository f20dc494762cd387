package bunstore

import (
	"context"
	"strings"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// nodeCachePathPrefix is where a node keeps cached weights: the model's
// repo below it.
const nodeCachePathPrefix = "/var/lib/platform/models/"

// cacheCopyArgs is the job that copies a model's weights onto a node.
type cacheCopyArgs struct {
	OperationID int64 `json:"operation_id"`
}

// Kind names the job kind.
func (cacheCopyArgs) Kind() string { return resources.OpKindNodeCacheCopy }

// cacheRemoveArgs is the job that removes a model's weights from a node.
type cacheRemoveArgs struct {
	OperationID int64 `json:"operation_id"`
}

// Kind names the job kind.
func (cacheRemoveArgs) Kind() string { return resources.OpKindNodeCacheRemove }

// cacheJob is the job that runs a node cache operation of kind.
func cacheJob(kind string, opID int64) river.JobArgs {
	if kind == resources.OpKindNodeCacheRemove {
		return cacheRemoveArgs{OperationID: opID}
	}
	return cacheCopyArgs{OperationID: opID}
}

// cacheCopyWorker finishes a copy: the cache turns ready, the model becomes
// offline-ready (location both, or local without a central copy) and the
// operation succeeds, all in the transaction that completes the job; a
// retried job finds the operation finished and only completes.
type cacheCopyWorker struct {
	river.WorkerDefaults[cacheCopyArgs]
	store *Store
}

// Work runs one attempt.
func (w *cacheCopyWorker) Work(ctx context.Context, job *river.Job[cacheCopyArgs]) error {
	return w.store.inTx(ctx, func(tx bun.Tx) error {
		cw, err := lockCacheWork(ctx, tx, job.Args.OperationID)
		if err != nil || cw == nil {
			return errOr(err, completeJob(ctx, tx, job))
		}
		before := cacheAudit(cw.cache, cw.model)
		switch {
		case cw.model.NASVolume == nil || cw.cache == nil || cw.cache.Status == resources.NodeCacheRemoving:
			if err := failCacheCopy(ctx, tx, cw); err != nil {
				return err
			}
			return completeJob(ctx, tx, job)
		case cw.cache.Status == resources.NodeCacheCopying:
			path := nodeCachePathPrefix + cw.model.Repo
			cw.cache.Status, cw.cache.Path, cw.cache.SizeGB = resources.NodeCacheReady, &path, cw.model.SizeGB
			if err := updateRow(ctx, tx, cw.cache); err != nil {
				return err
			}
		}
		return finishCacheWork(ctx, tx, job, cw, "node_cache.ready", before)
	})
}

// failCacheCopy ends a copy that can no longer run (the central copy or the
// cache vanished) as failed and drops its half-made cache.
func failCacheCopy(ctx context.Context, tx bun.Tx, cw *cacheWork) error {
	if cw.cache != nil && cw.cache.Status == resources.NodeCacheCopying {
		if _, err := tx.NewDelete().Model(cw.cache).WherePK().Exec(ctx); err != nil {
			return err
		}
	}
	return finishOperation(ctx, tx, cw.op, &resources.OperationError{Code: resources.CodeAIModelNotInStore,
		Detail: "the model's central copy or the cache record is gone; nothing was copied"}, nil)
}

// cacheRemoveWorker finishes a removal: the cache row goes, the model's
// offline_ready and location are recomputed and the operation succeeds, in
// the transaction that completes the job.
type cacheRemoveWorker struct {
	river.WorkerDefaults[cacheRemoveArgs]
	store *Store
}

// Work runs one attempt.
func (w *cacheRemoveWorker) Work(ctx context.Context, job *river.Job[cacheRemoveArgs]) error {
	return w.store.inTx(ctx, func(tx bun.Tx) error {
		cw, err := lockCacheWork(ctx, tx, job.Args.OperationID)
		if err != nil || cw == nil {
			return errOr(err, completeJob(ctx, tx, job))
		}
		before := cacheAudit(cw.cache, cw.model)
		if cw.cache != nil {
			if _, err := tx.NewDelete().Model(cw.cache).WherePK().Exec(ctx); err != nil {
				return err
			}
			cw.cache = nil
		}
		return finishCacheWork(ctx, tx, job, cw, "node_cache.removed", before)
	})
}

// cacheWork is what a cache job works on, locked: its operation, the cache
// (nil when there is none) and the model.
type cacheWork struct {
	op       *operationRow
	hostname string
	cache    *nodeCacheRow
	model    *cacheModelRow
}

// lockCacheWork locks a cache operation, its model and its cache; nil when
// the operation already finished (a retried job).
func lockCacheWork(ctx context.Context, tx bun.Tx, opID int64) (*cacheWork, error) {
	op, err := lockOperation(ctx, tx, opID)
	if err != nil || resources.Finished(op.Status) {
		return nil, err
	}
	cw := &cacheWork{op: op}
	var id string
	cw.hostname, id, _ = strings.Cut(op.TargetID, "/")
	if cw.model, err = cacheModel(ctx, tx, parseKeyOrZero(id), "UPDATE"); err != nil {
		return nil, err
	}
	cw.cache, err = cacheByKey(ctx, tx, cw.hostname, cw.model.ID)
	return cw, err
}

// finishCacheWork recomputes the model's placement, ends the operation as
// succeeded, records the event and completes the job.
func finishCacheWork[T river.JobArgs](ctx context.Context, tx bun.Tx, job *river.Job[T], cw *cacheWork, action string, before any) error {
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
	if err := writeAudit(ctx, tx, auditEntry{actor: resources.Actor{Label: "system"}, action: action,
		entityType: "node_cache", entityID: cw.op.TargetID, before: before, after: cacheAudit(cw.cache, cw.model)}); err != nil {
		return err
	}
	return completeJob(ctx, tx, job)
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

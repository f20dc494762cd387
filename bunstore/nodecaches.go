package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// nodeCacheRow is the bun model of node_caches; its JSON form is the audit
// state.
type nodeCacheRow struct {
	bun.BaseModel `bun:"table:node_caches"`
	Hostname      string    `bun:"hostname,pk" json:"hostname"`
	ModelID       int64     `bun:"model_id,pk" json:"model_id"`
	Status        string    `bun:"status" json:"status"`
	Path          *string   `bun:"path" json:"path"`
	SizeGB        *float64  `bun:"size_gb" json:"size_gb"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	ModelRepo     string    `bun:"model_repo,scanonly" json:"-"`
	OperationID   *int64    `bun:"operation_id,scanonly" json:"-"`
}

func (r nodeCacheRow) cache() resources.NodeCache {
	return resources.NodeCache{Hostname: r.Hostname, ModelID: r.ModelID, ModelRepo: r.ModelRepo, Status: r.Status,
		Path: r.Path, SizeGB: r.SizeGB, OperationID: r.OperationID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func (r nodeCacheRow) target() string { return resources.CacheTargetID(r.Hostname, r.ModelID) }

// cacheModelRow is the part of an ai_models row that node caches read and
// keep up to date (offline_ready, location); the catalogue owns the rest.
type cacheModelRow struct {
	bun.BaseModel `bun:"table:ai_models,alias:m"`
	ID            int64    `bun:"id,pk" json:"id"`
	Repo          string   `bun:"repo" json:"repo"`
	NASVolume     *string  `bun:"nas_volume" json:"nas_volume"`
	NASPath       *string  `bun:"nas_path" json:"-"`
	SizeGB        *float64 `bun:"size_gb" json:"size_gb"`
	OfflineReady  bool     `bun:"offline_ready" json:"offline_ready"`
	Location      *string  `bun:"location" json:"location"`
}

func cacheModel(ctx context.Context, db bun.IDB, id int64, lock string) (*cacheModelRow, error) {
	return rowByID[cacheModelRow](ctx, db, id, lock, resources.NotFound(resources.CodeAIModelNotFound, "no AI model %d", id))
}

// cacheByKey reads a node cache under a row lock: nil when there is none.
func cacheByKey(ctx context.Context, tx bun.IDB, hostname string, modelID int64) (*nodeCacheRow, error) {
	row := &nodeCacheRow{}
	err := tx.NewSelect().Model(row).Where("hostname = ? AND model_id = ?", hostname, modelID).For("UPDATE").Scan(ctx)
	if noRows(err) {
		return nil, nil
	}
	return row, err
}

// ListNodeCaches lists node caches by hostname, then model id, one page.
func (s *Store) ListNodeCaches(ctx context.Context, f resources.NodeCacheFilter, q resources.PageQuery) (resources.Page[resources.NodeCache], error) {
	sel := s.db.NewSelect().Model((*nodeCacheRow)(nil)).ColumnExpr("?TableAlias.*").
		ColumnExpr("(SELECT repo FROM ai_models m WHERE m.id = ?TableAlias.model_id) AS model_repo").
		ColumnExpr("(SELECT max(o.id) FROM operations o WHERE o.target_type = 'node_cache' AND " +
			"o.target_id = ?TableAlias.hostname || '/' || ?TableAlias.model_id AND " +
			"o.status NOT IN ('succeeded', 'failed')) AS operation_id").
		OrderExpr("hostname, model_id")
	if q.After != nil {
		if len(q.After) != 2 {
			return resources.Page[resources.NodeCache]{}, errBadKey
		}
		id, err := parseKey(q.After[1])
		if err != nil {
			return resources.Page[resources.NodeCache]{}, errBadKey
		}
		sel.Where("(hostname, model_id) > (?, ?)", q.After[0], id)
	}
	if f.Hostname != "" {
		sel.Where("hostname = ?", f.Hostname)
	}
	if f.ModelID != 0 {
		sel.Where("model_id = ?", f.ModelID)
	}
	whereIn(sel, "status", f.Status)
	return scanPage(ctx, sel, q.Limit, nodeCacheRow.cache, func(c resources.NodeCache) []string {
		return []string{c.Hostname, idString(c.ModelID)}
	})
}

// cacheSubjects checks that the node (share-locked, so an inventory import
// cannot remove it meanwhile) and the model exist. The model is locked
// before any of its caches: a cache change rewrites the model's
// node_caches_json (a trigger), and the cache worker locks the model first
// too (lockCacheWork), so every path takes the two in the same order.
func cacheSubjects(ctx context.Context, tx bun.Tx, hostname string, modelID int64) (*cacheModelRow, error) {
	if _, err := aiNodeByHostname(ctx, tx, hostname, "SHARE"); err != nil {
		return nil, err
	}
	model, err := cacheModel(ctx, tx, modelID, "NO KEY UPDATE")
	if err != nil {
		return nil, err
	}
	if ok, err := enrolled(ctx, tx, hostname); err != nil || !ok {
		return nil, errOr(err, resources.NotEnrolled(hostname))
	}
	return model, nil
}

// openCacheOperation returns the unfinished operation of kind on a cache,
// or starts a new one (with its job) when none is open; from is the
// cache's status before a removal (restored should the removal fail).
func (s *Store) openCacheOperation(ctx context.Context, tx bun.Tx, kind, target, from string) (*operationRow, error) {
	op, err := unfinishedCacheOperation(ctx, tx, kind, target, "")
	if op != nil || err != nil {
		return op, err
	}
	op, err = insertOperation(ctx, tx, kind, "node_cache", target)
	if err != nil {
		return nil, err
	}
	return op, s.enqueue(ctx, tx, cacheJob(kind, op.ID, from))
}

// CopyToNode implements resources.NodeCaches (see there).
func (s *Store) CopyToNode(ctx context.Context, a resources.Actor, hostname string, modelID int64, l *resources.Lease) (resources.CacheCopy, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryCacheCopyStarted); err != nil || resumed {
		op, err := resumeCreate(ctx, id, err, func(ctx context.Context, id int64) (*resources.Operation, error) {
			return s.GetOperation(ctx, idString(id))
		})
		return copyAnswer(op), err
	}
	var out resources.CacheCopy
	err := s.inTx(ctx, func(tx bun.Tx) error {
		model, err := cacheSubjects(ctx, tx, hostname, modelID)
		if err != nil {
			return err
		}
		if model.NASVolume == nil {
			return resources.Errorf(resources.KindConflict, resources.CodeAIModelNotInStore,
				"AI model %d has no central copy to copy from; the API never pulls weights from a model hub", modelID)
		}
		op, err := s.startCopy(ctx, tx, a, hostname, modelID)
		if err != nil {
			return err
		}
		out = copyAnswer(op.operation())
		return s.SetRecoveryPoint(ctx, tx, l, resources.RecoveryCacheCopyStarted, createdID{op.ID})
	})
	return out, err
}

// startCopy books the copy: a new cache (copying) with its operation, the
// running copy's operation, or a finished operation for a ready cache.
func (s *Store) startCopy(ctx context.Context, tx bun.Tx, a resources.Actor, hostname string, modelID int64) (*operationRow, error) {
	row := &nodeCacheRow{Hostname: hostname, ModelID: modelID, Status: resources.NodeCacheCopying}
	res, err := tx.NewInsert().Model(row).ExcludeColumn("created_at", "updated_at").On("CONFLICT DO NOTHING").
		Returning("*").Exec(ctx)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 { // it exists (perhaps just committed by a concurrent request)
		if row, err = cacheByKey(ctx, tx, hostname, modelID); err != nil || row == nil {
			return nil, errOr(err, resources.Errorf(resources.KindConflict, resources.CodeConflict, "the node cache changed; retry"))
		}
		return s.copyExisting(ctx, tx, a, row)
	}
	op, err := s.openCacheOperation(ctx, tx, resources.OpKindNodeCacheCopy, row.target(), "")
	if err != nil {
		return nil, err
	}
	return op, s.writeAudit(ctx, tx, auditEntry{actor: a, action: "node_cache.copy", entityType: "node_cache",
		entityID: row.target(), after: row})
}

// copyExisting answers a copy request for a cache that exists.
func (s *Store) copyExisting(ctx context.Context, tx bun.Tx, a resources.Actor, row *nodeCacheRow) (*operationRow, error) {
	switch row.Status {
	case resources.NodeCacheCopying:
		op, err := s.openCacheOperation(ctx, tx, resources.OpKindNodeCacheCopy, row.target(), "")
		return op, err
	case resources.NodeCacheMissing:
		return s.recopy(ctx, tx, a, row)
	case resources.NodeCacheReady:
		op, err := insertOperation(ctx, tx, resources.OpKindNodeCacheCopy, "node_cache", row.target())
		if err != nil {
			return nil, err
		}
		return op, finishOperation(ctx, tx, op, nil, cacheResult(row, true))
	default:
		removal, err := unfinishedCacheOperation(ctx, tx, resources.OpKindNodeCacheRemove, row.target(), "")
		if err != nil {
			return nil, err
		}
		return nil, cacheBusy(row, removal)
	}
}

// recopy copies again a cache its node lost (missing): it turns copying
// and a new copy starts.
func (s *Store) recopy(ctx context.Context, tx bun.Tx, a resources.Actor, before *nodeCacheRow) (*operationRow, error) {
	after := *before
	after.Status, after.Path, after.SizeGB = resources.NodeCacheCopying, nil, nil
	if err := updateRow(ctx, tx, &after); err != nil {
		return nil, err
	}
	op, err := s.openCacheOperation(ctx, tx, resources.OpKindNodeCacheCopy, after.target(), "")
	if err != nil {
		return nil, err
	}
	return op, s.writeAudit(ctx, tx, auditEntry{actor: a, action: "node_cache.copy", entityType: "node_cache",
		entityID: after.target(), before: before, after: &after})
}

// RemoveFromNode implements resources.NodeCaches (see there).
func (s *Store) RemoveFromNode(ctx context.Context, a resources.Actor, hostname string, modelID int64, l *resources.Lease) (resources.Operation, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryCacheRemoveStarted); err != nil || resumed {
		return resumeCreate(ctx, id, err, func(ctx context.Context, id int64) (*resources.Operation, error) {
			return s.GetOperation(ctx, idString(id))
		})
	}
	var out resources.Operation
	err := s.inTx(ctx, func(tx bun.Tx) error {
		copyOp, err := lockOpenCopy(ctx, tx, resources.CacheTargetID(hostname, modelID))
		if err != nil {
			return err
		}
		if _, err := cacheSubjects(ctx, tx, hostname, modelID); err != nil {
			return err
		}
		before, err := cacheByKey(ctx, tx, hostname, modelID)
		switch {
		case err != nil:
			return err
		case before == nil:
			return resources.NotFound(resources.CodeNodeCacheNotFound, "AI node %q holds no cache of AI model %d", hostname, modelID)
		}
		op, err := s.startRemove(ctx, tx, a, before)
		if err == nil && copyOp != nil && before.Status == resources.NodeCacheCopying {
			err = stopCopy(ctx, tx, copyOp, op, before)
		}
		if err != nil {
			return err
		}
		out = op.operation()
		return s.SetRecoveryPoint(ctx, tx, l, resources.RecoveryCacheRemoveStarted, createdID{op.ID})
	})
	return out, err
}

// startRemove turns a cache removing and starts its removal; a cache
// already being removed answers the running removal. A copying cache's
// copy is stopped by the caller (stopCopy).
func (s *Store) startRemove(ctx context.Context, tx bun.Tx, a resources.Actor, before *nodeCacheRow) (*operationRow, error) {
	from := before.Status
	if from == resources.NodeCacheCopying {
		from = resources.NodeCacheMissing // a failed removal leaves part of a stopped copy: not ready
	}
	op, err := s.openCacheOperation(ctx, tx, resources.OpKindNodeCacheRemove, before.target(), from)
	if err != nil || before.Status == resources.NodeCacheRemoving {
		return op, err
	}
	after := *before
	after.Status = resources.NodeCacheRemoving
	if err := updateRow(ctx, tx, &after); err != nil {
		return nil, err
	}
	return op, s.writeAudit(ctx, tx, auditEntry{actor: a, action: "node_cache.remove", entityType: "node_cache",
		entityID: before.target(), before: before, after: &after})
}

// copyAnswer tells a copy this request started (or that is running) from
// the finished one a ready cache answers with.
func copyAnswer(op resources.Operation) resources.CacheCopy {
	ready, _ := op.Result["already_ready"].(bool)
	return resources.CacheCopy{Operation: op, Started: !ready}
}

// cacheBusy refuses a copy of row's cache while its removal (the open
// operation, nil when none is found) runs, naming the operation to poll.
func cacheBusy(row *nodeCacheRow, removal *operationRow) *resources.Error {
	poll := "its operation"
	if removal != nil {
		poll = "GET /api/v1/operations/" + idString(removal.ID)
	}
	e := resources.Errorf(resources.KindConflict, resources.CodeNodeCacheBusy,
		"a removal of AI model %d on %q is running; poll %s and copy again once it finished",
		row.ModelID, row.Hostname, poll)
	e.RetryAfter = 5 * time.Second
	return e
}

// cacheResult is the result member of a finished cache operation.
func cacheResult(row *nodeCacheRow, alreadyReady bool) map[string]any {
	return map[string]any{"hostname": row.Hostname, "model_id": idString(row.ModelID), "status": row.Status,
		"path": row.Path, "already_ready": alreadyReady}
}

var _ resources.NodeCaches = (*Store)(nil)

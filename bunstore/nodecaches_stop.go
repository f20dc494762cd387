package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// lockOpenCopy locks the unfinished copy operation of a cache, if any
// (nil). A removal takes it before the model and the cache, the order in
// which the copy job locks them (lockCacheWork), so the two never deadlock.
func lockOpenCopy(ctx context.Context, tx bun.Tx, target string) (*operationRow, error) {
	return unfinishedCacheOperation(ctx, tx, resources.OpKindNodeCacheCopy, target, "UPDATE")
}

// unfinishedCacheOperation is the newest unfinished operation of kind on a
// cache target, or nil; lock ("" or "UPDATE") locks its row.
func unfinishedCacheOperation(ctx context.Context, tx bun.Tx, kind, target, lock string) (*operationRow, error) {
	op := &operationRow{}
	q := tx.NewSelect().Model(op).Where("kind = ? AND target_type = 'node_cache' AND target_id = ?", kind, target).
		Where("status NOT IN (?)", bun.List([]string{resources.OpSucceeded, resources.OpFailed})).
		OrderExpr("id DESC").Limit(1)
	if lock != "" {
		q = q.For(lock)
	}
	if err := q.Scan(ctx); err != nil {
		if noRows(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read the open %s operation of %s: %w", kind, target, err)
	}
	return op, nil
}

// stopCopy ends a running copy because its cache is being removed: failed
// copy_cancelled, naming the removal. The copy job sees its operation
// finished at its next look and stops driving the agent; the removal
// waits for that (copyStillDriving) before the agent deletes the bytes.
func stopCopy(ctx context.Context, tx bun.Tx, copyOp, removal *operationRow, row *nodeCacheRow) error {
	opErr := &resources.OperationError{Code: resources.CodeCopyCancelled,
		Detail: "the cache is being removed by operation " + idString(removal.ID) + "; the copy stopped"}
	result := map[string]any{"hostname": row.Hostname, "model_id": idString(row.ModelID), "status": "cancelled"}
	return finishOperation(ctx, tx, copyOp, opErr, result)
}

// copyStopped completes the job of a copy whose operation finished
// meanwhile (a removal stopped it) and reports so; the copy job looks before
// every request to the agent, so it sends none once its copy was stopped.
func (s *Store) copyStopped(ctx context.Context, job *river.Job[cacheCopyArgs]) (bool, error) {
	var stopped bool
	err := s.inTx(ctx, func(tx bun.Tx) error {
		var status string
		err := tx.NewSelect().Model((*operationRow)(nil)).Column("status").
			Where("id = ?", job.Args.OperationID).Scan(ctx, &status)
		if err != nil {
			return err
		}
		if stopped = resources.Finished(status); stopped {
			return completeJob(ctx, tx, job)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("look at copy operation %d: %w", job.Args.OperationID, err)
	}
	return stopped, nil
}

// copyStillDriving reports whether a copy job of the cache target is still
// in an attempt that may send the agent a copy request: running, and
// started less than bound ago (an attempt watches for at most the policy's
// watch time, so an older one belongs to a process that died).
func copyStillDriving(ctx context.Context, tx bun.Tx, target string, bound time.Duration) (bool, error) {
	return tx.NewSelect().TableExpr("river_job AS j").
		Join("JOIN operations AS o ON o.id = (j.args->>'operation_id')::bigint").
		Where("j.kind = ? AND j.state = 'running'", resources.OpKindNodeCacheCopy).
		Where("j.attempted_at > now() - make_interval(secs => ?)", bound.Seconds()).
		Where("o.target_type = 'node_cache' AND o.target_id = ?", target).Exists(ctx)
}

package bunstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// operationRow is the bun model of operations (every kind but promotions,
// which are release operations).
type operationRow struct {
	bun.BaseModel `bun:"table:operations"`
	ID            int64                        `bun:"id,pk,autoincrement" json:"id"`
	Kind          string                       `bun:"kind" json:"kind"`
	Status        string                       `bun:"status" json:"status"`
	TargetType    string                       `bun:"target_type" json:"target_type"`
	TargetID      string                       `bun:"target_id" json:"target_id"`
	Error         *resources.OperationError    `bun:"error,type:jsonb" json:"error"`
	Result        json.RawMessage              `bun:"result,type:jsonb,nullzero" json:"result"`
	Progress      *resources.OperationProgress `bun:"progress,type:jsonb" json:"progress"`
	Retry         *resources.OperationRetry    `bun:"retry,type:jsonb" json:"retry"`
	CreatedAt     time.Time                    `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt     time.Time                    `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	FinishedAt    *time.Time                   `bun:"finished_at" json:"finished_at"`
}

func (r operationRow) operation() resources.Operation {
	op := resources.Operation{ID: idString(r.ID), Kind: r.Kind, Status: r.Status,
		Target: resources.OperationTarget{Type: r.TargetType, ID: r.TargetID}, Error: r.Error, Progress: r.Progress,
		Retry: r.Retry, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt}
	if len(r.Result) > 0 {
		_ = json.Unmarshal(r.Result, &op.Result)
	}
	if resources.Finished(r.Status) {
		op.Retry = nil // left by an older release's worker, which knows no retry
	}
	return op
}

// GetOperation reads an operation by id: decimal ids are operations,
// "release:<id>" is the release operation of a promotion.
func (s *Store) GetOperation(ctx context.Context, id string) (*resources.Operation, error) {
	missing := resources.NotFound(resources.CodeOperationNotFound, "no operation %s", id)
	if rid, ok := resources.ReleaseOperationID(id); ok {
		rel, err := s.GetReleaseOperation(ctx, rid)
		if err != nil {
			return nil, missing
		}
		op := rel.Operation()
		return &op, nil
	}
	n, err := parseKey(id)
	if err != nil {
		return nil, missing
	}
	row, err := rowByID[operationRow](ctx, s.db, n, "", missing)
	if err != nil {
		return nil, err
	}
	op := row.operation()
	return &op, nil
}

// insertOperation records a new pending operation on a target.
func insertOperation(ctx context.Context, tx bun.Tx, kind, targetType, targetID string) (*operationRow, error) {
	row := &operationRow{Kind: kind, Status: resources.OpPending, TargetType: targetType, TargetID: targetID}
	_, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx)
	return row, err
}

// finishOperation ends an operation as succeeded (with result) or failed;
// it no longer waits to try again.
func finishOperation(ctx context.Context, tx bun.Tx, row *operationRow, opErr *resources.OperationError, result any) error {
	row.Status, row.Error, row.Retry = resources.OpSucceeded, opErr, nil
	if opErr != nil {
		row.Status = resources.OpFailed
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return err
	}
	row.Result = raw
	_, err = tx.NewUpdate().Model(row).Value("updated_at", "now()").Value("finished_at", "now()").
		WherePK().Returning("updated_at, finished_at").Exec(ctx)
	return err
}

// setProgress records how far a running operation got, its agent having
// answered (so it no longer waits to try again); a finished one keeps
// what it had.
func (s *Store) setProgress(ctx context.Context, id int64, p resources.OperationProgress) error {
	raw, _ := json.Marshal(p) // two integers: cannot fail
	_, err := s.db.NewUpdate().Model((*operationRow)(nil)).Set("progress = ?::jsonb", string(raw)).
		Set("retry = NULL").Set("updated_at = now()").
		Where("id = ? AND status = ?", id, resources.OpRunning).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record progress of operation %d: %w", id, err)
	}
	return nil
}

// setRetry records that a running operation waits to try its agent again;
// the agent's next answer clears it (setProgress), and so does the end of
// the operation. A finished operation keeps what it had.
func (s *Store) setRetry(ctx context.Context, id int64, r resources.OperationRetry) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.db.NewUpdate().Model((*operationRow)(nil)).Set("retry = ?::jsonb", string(raw)).
		Set("updated_at = now()").Where("id = ? AND status = ?", id, resources.OpRunning).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record the retry of operation %d: %w", id, err)
	}
	return nil
}

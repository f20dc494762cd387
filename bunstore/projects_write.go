package bunstore

import (
	"context"
	"reflect"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// PatchProject applies a merge patch under a row lock; the platform's own
// projects and retired ones refuse every write.
func (s *Store) PatchProject(ctx context.Context, a resources.Actor, id int64, p resources.ProjectPatch) (resources.Project, error) {
	var out resources.Project
	err := s.inTx(ctx, func(tx bun.Tx) error {
		before, err := projectByID(ctx, tx, id, "UPDATE")
		if err != nil {
			return err
		}
		next, err := before.project().Apply(p)
		if err != nil || reflect.DeepEqual(next, before.project()) {
			out = next
			return err
		}
		after := *before
		after.Name, after.Components, after.Domain = next.Name, next.Components, next.Domain
		if err := updateRow(ctx, tx, &after); err != nil {
			return projectConflict(err, &after)
		}
		out = after.project()
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "project.update", entityType: "project",
			entityID: idString(id), before: before, after: &after})
	})
	return out, err
}

// RetireProject retires a project (its short name and domain stay
// reserved); retiring a retired project changes nothing.
func (s *Store) RetireProject(ctx context.Context, a resources.Actor, id int64) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		before, err := projectByID(ctx, tx, id, "UPDATE")
		if err != nil || before.Status == resources.ProjectRetired {
			return err
		}
		if err := before.project().CheckWritable(); err != nil {
			return err
		}
		after := *before
		after.Status = resources.ProjectRetired
		if err := updateRow(ctx, tx, &after); err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "project.retire", entityType: "project",
			entityID: idString(id), before: before, after: &after})
	})
}

// provisionWorker provisions a project: pending → running, then after the
// (simulated) provisioning time the project becomes active and the operation
// succeeds, in the transaction that completes the job.
type provisionWorker struct {
	river.WorkerDefaults[provisionArgs]
	store *Store
	delay time.Duration
}

// Work runs one attempt; a retry after a crash resumes where it stopped.
func (w *provisionWorker) Work(ctx context.Context, job *river.Job[provisionArgs]) error {
	done := false
	err := w.store.inTx(ctx, func(tx bun.Tx) error {
		op, err := lockOperation(ctx, tx, job.Args.OperationID)
		if err != nil {
			return err
		}
		if resources.Finished(op.Status) {
			done = true
			return completeJob(ctx, tx, job)
		}
		op.Status = resources.OpRunning
		return updateRow(ctx, tx, op)
	})
	if err != nil || done {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(w.delay):
	}
	return w.store.inTx(ctx, func(tx bun.Tx) error { return w.finish(ctx, tx, job) })
}

func (w *provisionWorker) finish(ctx context.Context, tx bun.Tx, job *river.Job[provisionArgs]) error {
	op, err := lockOperation(ctx, tx, job.Args.OperationID)
	if err != nil || resources.Finished(op.Status) {
		return errOr(err, completeJob(ctx, tx, job))
	}
	before, err := projectByID(ctx, tx, parseKeyOrZero(op.TargetID), "UPDATE")
	if err != nil {
		return err
	}
	after := *before
	if after.Status == resources.ProjectProvisioning {
		after.Status = resources.ProjectActive
		if err := updateRow(ctx, tx, &after); err != nil {
			return err
		}
	}
	if err := finishOperation(ctx, tx, op, nil, map[string]any{"project_id": idString(after.ID), "status": after.Status}); err != nil {
		return err
	}
	if err := w.store.writeAudit(ctx, tx, auditEntry{actor: resources.Actor{Label: "system"}, action: "project.provision",
		entityType: "project", entityID: idString(after.ID), before: before, after: &after}); err != nil {
		return err
	}
	return completeJob(ctx, tx, job)
}

func lockOperation(ctx context.Context, tx bun.Tx, id int64) (*operationRow, error) {
	return rowByID[operationRow](ctx, tx, id, "UPDATE", resources.NotFound(resources.CodeOperationNotFound, "no operation %d", id))
}

func errOr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

func parseKeyOrZero(s string) int64 {
	n, _ := parseKey(s)
	return n
}

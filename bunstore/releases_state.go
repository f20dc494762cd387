package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// prodLockRow is the bun model of prod_locks.
type prodLockRow struct {
	bun.BaseModel `bun:"table:prod_locks"`
	ProjectID     int64     `bun:"project_id,pk" json:"project_id"`
	Locked        bool      `bun:"locked" json:"locked"`
	ChangedAt     time.Time `bun:"changed_at" json:"changed_at"`
	ChangedBy     string    `bun:"changed_by" json:"changed_by"`
}

// prodLockOf reads a project's lock; a project never locked is unlocked.
func prodLockOf(ctx context.Context, db bun.IDB, projectID int64, lock string) (resources.ProdLock, error) {
	row := &prodLockRow{}
	sel := db.NewSelect().Model(row).Where("project_id = ?", projectID)
	if lock != "" {
		sel.For(lock)
	}
	if err := sel.Scan(ctx); err != nil {
		if noRows(err) {
			return resources.ProdLock{ProjectID: projectID}, nil
		}
		return resources.ProdLock{}, err
	}
	return resources.ProdLock{ProjectID: projectID, Locked: row.Locked, ChangedAt: &row.ChangedAt, ChangedBy: &row.ChangedBy}, nil
}

// GetProdLock reads a project's PROD data lock.
func (s *Store) GetProdLock(ctx context.Context, projectID int64) (*resources.ProdLock, error) {
	if _, err := projectByID(ctx, s.db, projectID, ""); err != nil {
		return nil, err
	}
	l, err := prodLockOf(ctx, s.db, projectID, "")
	return &l, err
}

// SetProdLock locks or unlocks PROD data copies. A PUT to the state the
// lock already has changes nothing (time and author stay); unlocking needs
// confirm equal to the project's short name.
func (s *Store) SetProdLock(ctx context.Context, a resources.Actor, projectID int64, locked bool, confirm *string) (resources.ProdLock, error) {
	var out resources.ProdLock
	err := s.inTx(ctx, func(tx bun.Tx) error {
		p, err := projectByID(ctx, tx, projectID, "UPDATE")
		if err != nil {
			return err
		}
		if err := p.project().CheckWritable(); err != nil {
			return err
		}
		before, err := prodLockOf(ctx, tx, projectID, "UPDATE")
		if err != nil || before.Locked == locked {
			out = before
			return err
		}
		if !locked && (confirm == nil || *confirm != p.ShortName) {
			return resources.Invalid("confirm_unlock", resources.CodeUnlockNotConfirmed,
				"to unlock, confirm_unlock must equal the project's short name exactly")
		}
		row := &prodLockRow{ProjectID: projectID, Locked: locked, ChangedBy: a.Label}
		if _, err := tx.NewInsert().Model(row).Value("changed_at", "now()").On("CONFLICT (project_id) DO UPDATE").
			Set("locked = EXCLUDED.locked, changed_at = now(), changed_by = EXCLUDED.changed_by").Returning("*").Exec(ctx); err != nil {
			return err
		}
		out = resources.ProdLock{ProjectID: projectID, Locked: row.Locked, ChangedAt: &row.ChangedAt, ChangedBy: &row.ChangedBy}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "prod_lock.set", entityType: "project",
			entityID: idString(projectID), before: before, after: out})
	})
	return out, err
}

// ReleaseState is what a project's pipelines last reported per environment
// and component, its PROD data lock and its open release operations, read
// in one snapshot so that a promotion finishing meanwhile shows either open
// or reported, never neither.
func (s *Store) ReleaseState(ctx context.Context, projectID int64) (*resources.ReleaseState, error) {
	var st *resources.ReleaseState
	err := s.inSnapshot(ctx, func(tx bun.Tx) error {
		if _, err := projectByID(ctx, tx, projectID, ""); err != nil {
			return err
		}
		var err error
		if st, err = deploymentsOf(ctx, tx, projectID); err != nil {
			return err
		}
		if st.ProdLock, err = prodLockOf(ctx, tx, projectID, ""); err != nil {
			return err
		}
		var rows []releaseRow
		open := []string{resources.OpPending, resources.OpAwaitingApproval,
			resources.OpRunning, resources.OpAwaitingOperator}
		err = selectReleases(tx).Where("?TableAlias.project_id = ?", projectID).
			Where("?TableAlias.status IN (?)", bun.List(open)).
			OrderExpr("?TableAlias.created_at DESC, ?TableAlias.id DESC").Scan(ctx, &rows)
		for _, r := range rows {
			st.Open = append(st.Open, r.release())
		}
		return err
	})
	return st, err
}

// deploymentsOf is a release state holding the versions last reported per
// environment and component (nil where none was).
func deploymentsOf(ctx context.Context, db bun.IDB, projectID int64) (
	*resources.ReleaseState, error) {
	st := &resources.ReleaseState{ProjectID: projectID, Deployments: map[string]map[string]*resources.Deployment{}}
	for _, env := range []string{resources.EnvDev, resources.EnvUAT, resources.EnvProd} {
		st.Deployments[env] = map[string]*resources.Deployment{}
		for _, c := range resources.Components {
			st.Deployments[env][c] = nil
		}
	}
	var reported []struct {
		Env, Component string
		resources.Deployment
	}
	if err := db.NewRaw(`SELECT env, component, version, reported_at, reported_by FROM deployments
		WHERE project_id = ? AND env IN ('dev', 'uat', 'prod')`, projectID).Scan(ctx, &reported); err != nil {
		return nil, err
	}
	for _, d := range reported {
		st.Deployments[d.Env][d.Component] = &d.Deployment
	}
	return st, nil
}

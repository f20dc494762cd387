package bunstore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// DefaultReconcileInterval is how often the node caches are compared with
// what the node agents report.
const DefaultReconcileInterval = time.Minute

// reconcileArgs is the periodic job that compares the database's node
// caches with every enrolled node agent's report.
type reconcileArgs struct{}

// Kind names the job kind.
func (reconcileArgs) Kind() string { return "node_cache_reconcile" }

// reconcileWorker asks each enrolled node's agent what it holds and makes
// the database agree, node by node, each change audited as system: a ready
// cache the agent no longer reports (or reports corrupt) turns missing; a
// missing one it reports verified again turns ready, and a cache of a
// catalogue model the database does not know is adopted — both only when
// the agent verified it against that model's own central copy, while one
// it reports corrupt is recorded missing (its bytes then show, and a
// DELETE removes them); a ready one it reports verified at another
// directory takes that path. The
// models' offline_ready and location follow. Caches being copied,
// checked or removed are left alone; a node whose agent does not answer
// changes nothing.
type reconcileWorker struct {
	river.WorkerDefaults[reconcileArgs]
	store  *Store
	agents resources.NodeAgents
	logger *slog.Logger
}

// Work reconciles every enrolled node once.
func (w *reconcileWorker) Work(ctx context.Context, _ *river.Job[reconcileArgs]) error {
	nodes, err := w.store.NodeAgentEnrolments(ctx, nil)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		rep, err := w.agents.Report(ctx, n.Hostname)
		if err != nil {
			w.logger.Info("node cache reconcile: agent did not answer; nothing changed",
				"hostname", n.Hostname, "error", err)
			continue
		}
		if err := w.store.reconcileNode(ctx, n.Hostname, rep); err != nil {
			return fmt.Errorf("reconcile node caches of %q: %w", n.Hostname, err)
		}
	}
	return nil
}

// onDisk is what an agent reports of one node: its ready (verified) caches
// by repo, the repos on its disk that are not verified (yet) — being
// copied or checked, with no central copy to check them against, or in a
// state of a newer agent this release does not know — and
// its corrupt caches by repo (a file differs from the central copy).
type onDisk struct {
	ready   map[string]resources.AgentCache
	present map[string]bool
	corrupt map[string]resources.AgentCache
}

func diskOf(rep resources.AgentReport) onDisk {
	d := onDisk{ready: map[string]resources.AgentCache{}, present: map[string]bool{},
		corrupt: map[string]resources.AgentCache{}}
	for _, c := range rep.Caches {
		switch c.State {
		case resources.AgentCacheReady:
			d.ready[c.Repo] = c
		case resources.AgentCacheCopying, resources.AgentCacheVerifying, resources.AgentCacheUnverifiable:
			d.present[c.Repo] = true
		case resources.AgentCacheCorrupt:
			d.corrupt[c.Repo] = c
		case resources.AgentCacheFailed: // a stopped copy: no cache on the node
		default: // a newer agent's state: on the node, not verified as this release knows it
			d.present[c.Repo] = true
		}
	}
	return d
}

// verifiedFor reports whether the agent's ready cache c holds model's
// weights: the agent verified it against the model's own central copy. A
// model without a central copy (planned) has nothing a cache could be
// verified against; an agent that does not name the central copy (older
// than this rule) is not trusted with an adoption.
func verifiedFor(model *cacheModelRow, c resources.AgentCache) bool {
	if model.NASVolume == nil || model.NASPath == nil {
		return false
	}
	source, err := resources.AgentSource(*model.NASPath)
	return err == nil && c.Source == source
}

// reconcileNode makes the database's caches of one node agree with its
// agent's report, in one transaction (models locked before caches, as
// every cache path does).
func (s *Store) reconcileNode(ctx context.Context, hostname string, rep resources.AgentReport) error {
	disk := diskOf(rep)
	return s.inTx(ctx, func(tx bun.Tx) error {
		models, err := reconcileModels(ctx, tx, hostname, disk)
		if err != nil {
			return err
		}
		var caches []nodeCacheRow
		if err := tx.NewSelect().Model(&caches).Where("hostname = ?", hostname).OrderExpr("model_id").
			For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		for i := range caches {
			if err := s.reconcileCache(ctx, tx, &caches[i], models[caches[i].ModelID], disk); err != nil {
				return err
			}
		}
		return s.adoptCaches(ctx, tx, hostname, caches, models, disk)
	})
}

// reconcileModels locks, in id order, the models of the node's caches and
// the catalogue models of the caches on its disk.
func reconcileModels(ctx context.Context, tx bun.Tx, hostname string,
	disk onDisk) (map[int64]*cacheModelRow, error) {
	repos := make([]string, 0, len(disk.ready)+len(disk.corrupt))
	for r := range disk.ready {
		repos = append(repos, r)
	}
	for r := range disk.corrupt {
		repos = append(repos, r)
	}
	sel := tx.NewSelect().Model((*cacheModelRow)(nil)).
		Where("id IN (SELECT model_id FROM node_caches WHERE hostname = ?)", hostname).OrderExpr("id").For("UPDATE")
	if len(repos) > 0 {
		sel.WhereOr("repo IN (?)", bun.List(repos))
	}
	var rows []*cacheModelRow
	if err := sel.Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make(map[int64]*cacheModelRow, len(rows))
	for _, m := range rows {
		out[m.ID] = m
	}
	return out, nil
}

// reconcileCache turns a ready cache missing when the disk lacks it or
// holds it corrupt, and a missing one ready when the disk has it again,
// verified against the model's central copy; a ready one the agent
// reports verified at another directory (the cache root moved) takes it.
func (s *Store) reconcileCache(ctx context.Context, tx bun.Tx, c *nodeCacheRow,
	model *cacheModelRow, disk onDisk) error {
	found, onNode := disk.ready[model.Repo]
	before := cacheAudit(c, model)
	var action, reason string
	switch {
	case c.Status == resources.NodeCacheReady && !onNode && !disk.present[model.Repo]:
		c.Status, action = resources.NodeCacheMissing, "node_cache.missing"
		reason = missingReason(disk.corrupt[model.Repo])
	case c.Status == resources.NodeCacheMissing && onNode && verifiedFor(model, found):
		size := gigabytes(found.BytesTotal)
		c.Status, c.Path, c.SizeGB, action = resources.NodeCacheReady, &found.Path, &size, "node_cache.found"
	case c.Status == resources.NodeCacheReady && onNode && verifiedFor(model, found) &&
		(c.Path == nil || *c.Path != found.Path):
		size := gigabytes(found.BytesTotal)
		c.Path, c.SizeGB, action = &found.Path, &size, "node_cache.moved"
	default:
		return nil
	}
	if err := updateRow(ctx, tx, c); err != nil {
		return err
	}
	if err := placeModel(ctx, tx, model); err != nil {
		return err
	}
	after := cacheAudit(c, model)
	after.Reason = reason
	return s.writeAudit(ctx, tx, auditEntry{actor: systemActor, action: action, entityType: "node_cache",
		entityID: c.target(), before: before, after: after})
}

// missingReason is why a ready cache turns missing: the agent reports it
// corrupt, or (c has no state) no longer reports it at all.
func missingReason(c resources.AgentCache) string {
	switch {
	case c.State != resources.AgentCacheCorrupt:
		return "the node agent no longer reports the cache: its directory, its manifest or one of " +
			"its files is gone from the node (PUT copies it again)"
	case c.Error == nil:
		return "the node agent reports the cache corrupt"
	}
	return "the node agent reports the cache corrupt: " + c.Error.Detail
}

// adoptCaches records the caches on the node's disk that the database does
// not know, when the catalogue has their model: ready when the agent
// verified them against its central copy, missing when it reports them
// corrupt (bytes on the node that are not the model's cache: the row
// shows them, and a DELETE removes them).
func (s *Store) adoptCaches(ctx context.Context, tx bun.Tx, hostname string, known []nodeCacheRow,
	models map[int64]*cacheModelRow, disk onDisk) error {
	for _, m := range sortedModels(models) {
		if slices.ContainsFunc(known, func(k nodeCacheRow) bool { return k.ModelID == m.ID }) {
			continue
		}
		row, action, reason := &nodeCacheRow{Hostname: hostname, ModelID: m.ID}, "", ""
		if c, onNode := disk.ready[m.Repo]; onNode && verifiedFor(m, c) {
			size := gigabytes(c.BytesTotal)
			row.Status, row.Path, row.SizeGB, action = resources.NodeCacheReady, &c.Path, &size,
				"node_cache.adopted"
		} else if c, broken := disk.corrupt[m.Repo]; broken {
			row.Status, row.Path, action = resources.NodeCacheMissing, &c.Path, "node_cache.missing"
			reason = missingReason(c) + "; recorded so that a DELETE removes it (or a PUT copies over it)"
		} else {
			continue
		}
		if err := s.adoptCache(ctx, tx, row, m, action, reason); err != nil {
			return err
		}
	}
	return nil
}

// adoptCache inserts row, a cache of m found on the node, and audits it.
func (s *Store) adoptCache(ctx context.Context, tx bun.Tx, row *nodeCacheRow, m *cacheModelRow,
	action, reason string) error {
	if _, err := tx.NewInsert().Model(row).ExcludeColumn("created_at", "updated_at").
		Returning("*").Exec(ctx); err != nil {
		return err
	}
	before := cacheAudit(nil, m)
	if err := placeModel(ctx, tx, m); err != nil {
		return err
	}
	after := cacheAudit(row, m)
	after.Reason = reason
	return s.writeAudit(ctx, tx, auditEntry{actor: systemActor, action: action,
		entityType: "node_cache", entityID: row.target(), before: before, after: after})
}

func sortedModels(m map[int64]*cacheModelRow) []*cacheModelRow {
	out := make([]*cacheModelRow, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *cacheModelRow) int { return int(a.ID - b.ID) })
	return out
}

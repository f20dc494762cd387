package bunstore

import (
	"context"
	"reflect"
	"slices"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// inventoryLockKey serialises inventory imports (pg_advisory_xact_lock).
const inventoryLockKey int64 = 0x706c6174696e7601

// keptReason says why a node missing from the file stays on the roster.
const keptReason = "holds node caches; remove them first"

// inventoryAudit is the after-state of an import's audit event.
type inventoryAudit struct {
	resources.InventoryImport
	Roster []aiNodeRow `json:"roster"`
}

// ImportInventory replaces the roster with the file's nodes in one
// transaction with one audit event: listed nodes are created or updated,
// nodes missing from the file are removed unless they hold node caches
// (then kept and reported). Imports run one at a time.
func (s *Store) ImportInventory(ctx context.Context, by resources.Actor, f resources.InventoryFile) (resources.InventoryImport, error) {
	out := resources.InventoryImport{Created: []string{}, Updated: []string{}, Unchanged: []string{}, Removed: []string{},
		Kept: []resources.KeptNode{}}
	if err := f.Validate(); err != nil {
		return out, err
	}
	err := s.inTx(ctx, func(tx bun.Tx) error {
		actor, err := actorFor(ctx, tx, by, resources.PermAIWrite, resources.PermAdmin)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", inventoryLockKey); err != nil {
			return err
		}
		var before []aiNodeRow
		if err := tx.NewSelect().Model(&before).OrderExpr("hostname").For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		if err := upsertInventory(ctx, tx, before, f.Nodes, &out); err != nil {
			return err
		}
		if err := removeMissing(ctx, tx, before, f.Nodes, &out); err != nil {
			return err
		}
		var after []aiNodeRow
		if err := tx.NewSelect().Model(&after).OrderExpr("hostname").Scan(ctx); err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: actor, action: "ai_node.inventory_import", entityType: "ai_node_inventory",
			before: before, after: inventoryAudit{InventoryImport: out, Roster: after}})
	})
	return out, err
}

// inventoryRow is the roster row an inventory entry describes.
func inventoryRow(n resources.InventoryNode) aiNodeRow {
	return aiNodeRow{Hostname: n.Hostname, IsVirtual: n.IsVirtual, GPUClass: n.GPUClass, MgmtIP: n.MgmtIP, Site: n.Site,
		SpecsSummary: n.SpecsSummary, ParentHost: n.ParentHost, VMID: n.VMID, Services: nonNilStrings(n.Services),
		AgentURL: n.AgentURL}
}

// upsertInventory writes every listed node (imported_at = now) and sorts
// the hostnames into created, updated and unchanged.
func upsertInventory(ctx context.Context, tx bun.Tx, before []aiNodeRow, nodes []resources.InventoryNode, out *resources.InventoryImport) error {
	old := map[string]aiNodeRow{}
	for _, r := range before {
		old[r.Hostname] = r
	}
	rows := make([]aiNodeRow, 0, len(nodes))
	for _, n := range nodes {
		row := inventoryRow(n)
		prev, known := old[n.Hostname]
		switch {
		case !known:
			out.Created = append(out.Created, n.Hostname)
		case sameRoster(prev, row):
			out.Unchanged = append(out.Unchanged, n.Hostname)
		default:
			out.Updated = append(out.Updated, n.Hostname)
		}
		rows = append(rows, row)
	}
	for _, list := range [][]string{out.Created, out.Updated, out.Unchanged} {
		slices.Sort(list)
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.NewInsert().Model(&rows).ExcludeColumn("imported_at").
		On("CONFLICT (hostname) DO UPDATE").
		Set("is_virtual = EXCLUDED.is_virtual, gpu_class = EXCLUDED.gpu_class, mgmt_ip = EXCLUDED.mgmt_ip").
		Set("site = EXCLUDED.site, specs_summary = EXCLUDED.specs_summary, parent_host = EXCLUDED.parent_host").
		Set("vmid = EXCLUDED.vmid, services = EXCLUDED.services, agent_url = EXCLUDED.agent_url").
		Set("imported_at = now()").Exec(ctx)
	return err
}

// sameRoster compares the inventory members of two rows (not imported_at).
func sameRoster(a, b aiNodeRow) bool {
	a.ImportedAt = b.ImportedAt
	a.Services, b.Services = nonNilStrings(a.Services), nonNilStrings(b.Services)
	return reflect.DeepEqual(a, b)
}

// removeMissing deletes the nodes the file no longer lists, except those
// holding node caches, which are kept and reported.
func removeMissing(ctx context.Context, tx bun.Tx, before []aiNodeRow, nodes []resources.InventoryNode, out *resources.InventoryImport) error {
	listed := map[string]bool{}
	for _, n := range nodes {
		listed[n.Hostname] = true
	}
	var missing []string
	for _, r := range before {
		if !listed[r.Hostname] {
			missing = append(missing, r.Hostname)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var held []struct {
		Hostname string `bun:"hostname"`
		N        int    `bun:"n"`
	}
	if err := tx.NewSelect().TableExpr("node_caches").ColumnExpr("hostname, count(*) AS n").
		Where("hostname IN (?)", bun.List(missing)).GroupExpr("hostname").OrderExpr("hostname").Scan(ctx, &held); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, h := range held {
		keep[h.Hostname] = true
		out.Kept = append(out.Kept, resources.KeptNode{Hostname: h.Hostname, NodeCaches: h.N, Reason: keptReason})
	}
	for _, h := range missing {
		if !keep[h] {
			out.Removed = append(out.Removed, h)
		}
	}
	if len(out.Removed) == 0 {
		return nil
	}
	_, err := tx.NewDelete().Model((*aiNodeRow)(nil)).Where("hostname IN (?)", bun.List(out.Removed)).Exec(ctx)
	return err
}

var _ resources.InventoryImporter = (*Store)(nil)

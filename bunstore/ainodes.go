package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// aiNodeRow is the bun model of ai_nodes (the roster from the hardware
// inventory); its JSON form is the audit state.
type aiNodeRow struct {
	bun.BaseModel `bun:"table:ai_nodes"`
	Hostname      string    `bun:"hostname,pk" json:"hostname"`
	IsVirtual     bool      `bun:"is_virtual" json:"is_virtual"`
	GPUClass      *string   `bun:"gpu_class" json:"gpu_class"`
	MgmtIP        *string   `bun:"mgmt_ip" json:"mgmt_ip"`
	Site          *string   `bun:"site" json:"site"`
	SpecsSummary  *string   `bun:"specs_summary" json:"specs_summary"`
	ParentHost    *string   `bun:"parent_host" json:"parent_host"`
	VMID          *int      `bun:"vmid" json:"vmid"`
	Services      []string  `bun:"services,array" json:"services"`
	AgentURL      *string   `bun:"agent_url" json:"agent_url"`
	ImportedAt    time.Time `bun:"imported_at,nullzero,default:now()" json:"imported_at"`
}

func (r aiNodeRow) node() resources.AINode {
	return resources.AINode{Hostname: r.Hostname, IsVirtual: r.IsVirtual, GPUClass: r.GPUClass, MgmtIP: r.MgmtIP,
		Site: r.Site, SpecsSummary: r.SpecsSummary, ParentHost: r.ParentHost, VMID: r.VMID,
		Services: nonNilStrings(r.Services), AgentURL: r.AgentURL, ImportedAt: r.ImportedAt}
}

// aiNodeByHostname reads a roster row, optionally under a row lock.
func aiNodeByHostname(ctx context.Context, db bun.IDB, hostname, lock string) (*aiNodeRow, error) {
	row := &aiNodeRow{}
	sel := db.NewSelect().Model(row).Where("hostname = ?", hostname)
	if lock != "" {
		sel.For(lock)
	}
	if err := sel.Scan(ctx); err != nil {
		if noRows(err) {
			return nil, resources.NotFound(resources.CodeAINodeNotFound, "no AI node %q", hostname)
		}
		return nil, err
	}
	return row, nil
}

// ListAINodes lists the roster in hostname order, one page.
func (s *Store) ListAINodes(ctx context.Context, f resources.AINodeFilter, q resources.PageQuery) (resources.Page[resources.AINode], error) {
	if f.Hostnames != nil && len(f.Hostnames) == 0 {
		return resources.Page[resources.AINode]{Items: []resources.AINode{}}, nil
	}
	sel := s.db.NewSelect().Model((*aiNodeRow)(nil)).OrderExpr("hostname")
	switch len(q.After) {
	case 0:
	case 1:
		sel.Where("hostname > ?", q.After[0])
	default:
		return resources.Page[resources.AINode]{}, errBadKey
	}
	for col, v := range map[string]string{"site": f.Site, "gpu_class": f.GPUClass} {
		if v != "" {
			sel.Where("? = ?", bun.Ident(col), v)
		}
	}
	if f.Hostnames != nil {
		sel.Where("hostname IN (?)", bun.List(f.Hostnames))
	}
	return scanPage(ctx, sel, q.Limit, aiNodeRow.node, func(n resources.AINode) []string { return []string{n.Hostname} })
}

// GetAINode reads one roster node.
func (s *Store) GetAINode(ctx context.Context, hostname string) (*resources.AINode, error) {
	row, err := aiNodeByHostname(ctx, s.db, hostname, "")
	if err != nil {
		return nil, err
	}
	n := row.node()
	return &n, nil
}

var _ resources.AINodes = (*Store)(nil)

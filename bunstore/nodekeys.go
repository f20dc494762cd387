package bunstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// nodeKeyRow is the bun model of ai_node_keys: the nonce a node key is
// derived from, never the key.
type nodeKeyRow struct {
	bun.BaseModel `bun:"table:ai_node_keys"`
	Hostname      string    `bun:"hostname,pk"`
	Nonce         []byte    `bun:"nonce"`
	CreatedBy     string    `bun:"created_by"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()"`
}

// nodeKeyAudit is what a node-key event records: who, when, whether an
// earlier key stopped working — never the nonce.
type nodeKeyAudit struct {
	Hostname  string    `json:"hostname"`
	Rotated   bool      `json:"rotated"`
	CreatedAt time.Time `json:"created_at"`
}

// MintNodeKey enrols a roster node's agent, or rotates its key: a fresh
// nonce replaces the old one (whose key stops working at once), and the
// key derived from it under the pepper is returned, this once. It needs a
// person holding ai-write-global or admin.
func (m TokenMinter) MintNodeKey(ctx context.Context, by resources.Actor, hostname string) (resources.NodeKeyMint, error) {
	if !m.Pepper.Configured() {
		return resources.NodeKeyMint{}, resources.PepperUnconfigured("node keys")
	}
	row := &nodeKeyRow{Hostname: hostname, Nonce: make([]byte, 32)}
	_, _ = rand.Read(row.Nonce)
	var out resources.NodeKeyMint
	err := m.inTx(ctx, func(tx bun.Tx) error {
		actor, err := sessionActor(ctx, tx, by, resources.PermAIWrite, resources.PermAdmin)
		if err != nil {
			return err
		}
		if _, err := aiNodeByHostname(ctx, tx, hostname, "NO KEY UPDATE"); err != nil {
			return err
		}
		n, err := tx.NewSelect().Model((*nodeKeyRow)(nil)).Where("hostname = ?", hostname).Count(ctx)
		if err != nil {
			return err
		}
		row.CreatedBy = actor.Label
		if _, err := tx.NewInsert().Model(row).ExcludeColumn("created_at").On("CONFLICT (hostname) DO UPDATE").
			Set("nonce = EXCLUDED.nonce, created_by = EXCLUDED.created_by, created_at = now()").
			Returning("created_at").Exec(ctx); err != nil {
			return err
		}
		out = resources.NodeKeyMint{Hostname: hostname, Key: resources.DeriveNodeKey(m.Pepper, hostname, row.Nonce),
			Rotated: n > 0, CreatedAt: row.CreatedAt}
		return m.writeAudit(ctx, tx, auditEntry{actor: actor, action: "ai_node.node_key", entityType: "ai_node",
			entityID: hostname, after: nodeKeyAudit{Hostname: hostname, Rotated: n > 0, CreatedAt: row.CreatedAt}})
	})
	if err != nil {
		return resources.NodeKeyMint{}, fmt.Errorf("mint node key of %q: %w", hostname, err)
	}
	return out, nil
}

// NodeAgentEnrolments lists the roster nodes that have an agent_url and a
// node key (all of them when hostnames is nil), in hostname order.
func (s *Store) NodeAgentEnrolments(ctx context.Context, hostnames []string) ([]resources.NodeAgentEnrolment, error) {
	var rows []struct {
		Hostname string `bun:"hostname"`
		URL      string `bun:"agent_url"`
		Nonce    []byte `bun:"nonce"`
	}
	sel := s.db.NewSelect().TableExpr("ai_nodes AS n").Join("JOIN ai_node_keys AS k USING (hostname)").
		ColumnExpr("n.hostname, n.agent_url, k.nonce").Where("n.agent_url IS NOT NULL").OrderExpr("n.hostname")
	if hostnames != nil {
		if len(hostnames) == 0 {
			return nil, nil
		}
		sel.Where("n.hostname IN (?)", bun.List(hostnames))
	}
	if err := sel.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("list node agent enrolments: %w", err)
	}
	out := make([]resources.NodeAgentEnrolment, len(rows))
	for i, r := range rows {
		out[i] = resources.NodeAgentEnrolment{Hostname: r.Hostname, URL: r.URL, KeyNonce: r.Nonce}
	}
	return out, nil
}

// enrolled reports whether a node's agent can be reached: an agent_url and
// a node key.
func enrolled(ctx context.Context, tx bun.IDB, hostname string) (bool, error) {
	return tx.NewSelect().TableExpr("ai_nodes AS n").Join("JOIN ai_node_keys AS k USING (hostname)").
		Where("n.hostname = ? AND n.agent_url IS NOT NULL", hostname).Exists(ctx)
}

var _ resources.NodeAgentDirectory = (*Store)(nil)

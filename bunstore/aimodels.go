package bunstore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"platformapi/resources"
)

// aiModelMeta holds the metadata columns of ai_models; its fields match
// resources.AIModelMeta one for one, so the two convert into each other.
type aiModelMeta struct {
	Architecture  *string              `bun:"architecture" json:"architecture"`
	Benchmarks    resources.Benchmarks `bun:"benchmarks,type:jsonb,nullzero" json:"benchmarks"`
	Category      *string              `bun:"category" json:"category"`
	ContextWindow *string              `bun:"context_window" json:"context_window"`
	Description   *string              `bun:"description" json:"description"`
	FrontierEquiv *string              `bun:"frontier_equiv" json:"frontier_equiv"`
	GatewayTier   *string              `bun:"gateway_tier" json:"gateway_tier"`
	License       *string              `bun:"license" json:"license"`
	MinTarget     *string              `bun:"min_target" json:"min_target"`
	ModelCardURL  *string              `bun:"model_card_url" json:"model_card_url"`
	Notes         *string              `bun:"notes" json:"notes"`
	Org           *string              `bun:"org" json:"org"`
	ParamCountB   *float64             `bun:"param_count_b" json:"param_count_b"`
	Params        *string              `bun:"params" json:"params"`
	Published     *string              `bun:"published" json:"published"`
	Quant         *string              `bun:"quant" json:"quant"`
	ServingNode   *string              `bun:"serving_node" json:"serving_node"`
	SizeGB        *float64             `bun:"size_gb" json:"size_gb"`
	StrongAxis    *string              `bun:"strong_axis" json:"strong_axis"`
	Summary       *string              `bun:"summary" json:"summary"`
	Vendor        *string              `bun:"vendor" json:"vendor"`
	VendorCountry *string              `bun:"vendor_country" json:"vendor_country"`
}

// aiModelRow is the bun model of ai_models; its JSON form is the audit state.
type aiModelRow struct {
	bun.BaseModel `bun:"table:ai_models"`
	ID            int64   `bun:"id,pk,autoincrement" json:"id"`
	Repo          string  `bun:"repo" json:"repo"`
	DisplayName   string  `bun:"display_name" json:"display_name"`
	Gated         bool    `bun:"gated" json:"gated"`
	Status        string  `bun:"status" json:"status"`
	Location      *string `bun:"location" json:"location"`
	OfflineReady  bool    `bun:"offline_ready" json:"offline_ready"`
	NASVolume     *string `bun:"nas_volume" json:"nas_volume"`
	NASPath       *string `bun:"nas_path" json:"nas_path"`
	ClusterRecipe *string `bun:"cluster_recipe" json:"cluster_recipe"`
	aiModelMeta
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt time.Time `bun:"updated_at,nullzero,default:now()" json:"updated_at"`
	// Caches is the row's node caches as JSON in hostname order, kept by a
	// trigger on node_caches (migration 20261123700001); never written here.
	Caches json.RawMessage `bun:"node_caches_json,scanonly" json:"-"`
}

// withAllColumns makes sel read every column of the rows, their node caches
// included (Bun's own column list leaves the scan-only Caches out).
func withAllColumns(sel *bun.SelectQuery) *bun.SelectQuery {
	return sel.ColumnExpr("?TableAlias.*")
}

// modelWithCaches converts a row read with withAllColumns.
func (r aiModelRow) modelWithCaches() (resources.AIModel, error) {
	m := r.model()
	var err error
	m.NodeCaches, err = decodeCaches(r.ID, r.Caches)
	return m, err
}

// decodeCaches converts a model's node_caches_json.
func decodeCaches(id int64, raw json.RawMessage) ([]resources.NodeCacheRef, error) {
	var caches []modelCacheRow
	if err := gojson.Unmarshal(raw, &caches); err != nil { // go-json: on every catalogue read
		return nil, fmt.Errorf("bunstore: node caches of AI model %d: %w", id, err)
	}
	out := make([]resources.NodeCacheRef, 0, len(caches))
	for _, c := range caches {
		out = append(out, c.ref())
	}
	return out, nil
}

// cachesOf reads a model's node caches inside tx (from its node_caches_json).
func cachesOf(ctx context.Context, tx bun.IDB, id int64) ([]resources.NodeCacheRef, error) {
	var raw string // Bun scans a []byte destination as a slice of rows
	if err := tx.NewRaw("SELECT node_caches_json FROM ai_models WHERE id = ?", id).Scan(ctx, &raw); err != nil {
		return nil, fmt.Errorf("read node caches of AI model %d: %w", id, err)
	}
	return decodeCaches(id, json.RawMessage(raw))
}

// model converts the row; NodeCaches is left nil for the caller to fill.
func (r aiModelRow) model() resources.AIModel {
	return resources.AIModel{ID: r.ID, Repo: r.Repo, DisplayName: r.DisplayName, Gated: r.Gated, Status: r.Status,
		Location: r.Location, OfflineReady: r.OfflineReady, NASVolume: r.NASVolume, NASPath: r.NASPath,
		ClusterRecipe: r.ClusterRecipe, AIModelMeta: resources.AIModelMeta(r.aiModelMeta),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func aiModelRowOf(m resources.AIModel) *aiModelRow {
	return &aiModelRow{ID: m.ID, Repo: m.Repo, DisplayName: m.DisplayName, Gated: m.Gated, Status: m.Status,
		Location: m.Location, OfflineReady: m.OfflineReady, NASVolume: m.NASVolume, NASPath: m.NASPath,
		ClusterRecipe: m.ClusterRecipe, aiModelMeta: aiModelMeta(m.AIModelMeta),
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// aiModelByID reads a catalogue row, optionally under a row lock.
func aiModelByID(ctx context.Context, db bun.IDB, id int64, lock string) (*aiModelRow, error) {
	return rowByID[aiModelRow](ctx, db, id, lock, resources.NotFound(resources.CodeAIModelNotFound, "no AI model %d", id))
}

// getAIModel reads one catalogue row and its node caches by id ($1).
var getAIModel = sync.OnceValue(func() *hotRow[aiModelRow] {
	return newHotRow[aiModelRow](withAllColumns(bun.NewDB(nil, pgdialect.New()).NewSelect().
		Model((*aiModelRow)(nil))).Where("?TableAlias.id = $1").String())
})

// GetAIModel reads one catalogue row with its node caches, in one prepared
// query (the hottest read of the catalogue: see hotRow).
func (s *Store) GetAIModel(ctx context.Context, id int64) (*resources.AIModel, error) {
	hot := getAIModel()
	var row *aiModelRow
	err := s.observed(ctx, hot.query, func(ctx context.Context) (err error) {
		row, err = hot.get(ctx, s.db.DB, id)
		return err
	})
	if err != nil {
		if noRows(err) {
			return nil, resources.NotFound(resources.CodeAIModelNotFound, "no AI model %d", id)
		}
		return nil, fmt.Errorf("read AI model %d: %w", id, err)
	}
	m, err := row.modelWithCaches()
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// CreateAIModel implements resources.AIModels (see there): the row as
// resources.NewAIModel built it, 409 ai_model_repo_taken for a taken repo.
func (s *Store) CreateAIModel(ctx context.Context, a resources.Actor, m resources.AIModel, l *resources.Lease) (resources.AIModel, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryAIModelCreated); err != nil || resumed {
		return resumeCreate(ctx, id, err, s.GetAIModel)
	}
	var out resources.AIModel
	err := s.inTx(ctx, func(tx bun.Tx) error {
		row := aiModelRowOf(m)
		if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at", "updated_at").Returning("*").Exec(ctx); err != nil {
			if uniqueViolation(err, "ai_models_repo_key") {
				e := resources.Errorf(resources.KindConflict, resources.CodeAIModelRepoTaken, "repo %s is in the catalogue", m.Repo)
				e.Field = "repo"
				return e
			}
			return err
		}
		out = row.model()
		out.NodeCaches = []resources.NodeCacheRef{}
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "ai_model.create", entityType: "ai_model",
			entityID: idString(row.ID), after: row},
			recovery{lease: l, point: resources.RecoveryAIModelCreated, data: createdID{row.ID}, result: out})
	})
	return out, err
}

// PatchAIModel applies a merge patch under a row lock, audited with the
// states before and after; a patch that changes nothing writes nothing.
func (s *Store) PatchAIModel(ctx context.Context, a resources.Actor, id int64, p resources.AIModelPatch) (resources.AIModel, error) {
	var out resources.AIModel
	err := s.inTx(ctx, func(tx bun.Tx) error {
		before, err := aiModelByID(ctx, tx, id, "UPDATE")
		if err != nil {
			return err
		}
		next, err := before.model().Apply(p)
		if err != nil {
			return err
		}
		out = next
		if !reflect.DeepEqual(next, before.model()) {
			after := aiModelRowOf(next)
			if err := updateRow(ctx, tx, after); err != nil {
				return err
			}
			out = after.model()
			if err := s.writeAudit(ctx, tx, auditEntry{actor: a, action: "ai_model.update", entityType: "ai_model",
				entityID: idString(id), before: before, after: after}); err != nil {
				return err
			}
		}
		out.NodeCaches, err = cachesOf(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteAIModel deletes a planned row without node caches (else 409
// ai_model_has_weights). The row lock keeps a node cache from being added
// meanwhile (its foreign key needs the row).
func (s *Store) DeleteAIModel(ctx context.Context, a resources.Actor, id int64) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		row, err := aiModelByID(ctx, tx, id, "UPDATE")
		if err != nil {
			return err
		}
		var caches int
		if err := tx.NewRaw("SELECT count(*) FROM node_caches WHERE model_id = ?", id).Scan(ctx, &caches); err != nil {
			return err
		}
		if err := resources.CheckAIModelDelete(row.model(), caches); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model(row).WherePK().Exec(ctx); err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "ai_model.delete", entityType: "ai_model",
			entityID: idString(id), before: row})
	})
}

var _ resources.AIModels = (*Store)(nil)

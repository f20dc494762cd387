package bunstore

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// nullKey spells a null sort value in a page key (never a formatted number).
const nullKey = "null"

// aiModelSortColumns are the numeric columns the catalogue sorts by besides id.
var aiModelSortColumns = map[string]func(resources.AIModel) *float64{
	"param_count_b": func(m resources.AIModel) *float64 { return m.ParamCountB },
	"size_gb":       func(m resources.AIModel) *float64 { return m.SizeGB },
}

// ListAIModels lists the catalogue, one keyset page. The key is the sort
// value and the id (just the id when sorting by id); nulls sort last in
// either order, ties in id order of the same direction.
func (s *Store) ListAIModels(ctx context.Context, f resources.AIModelFilter, q resources.PageQuery) (resources.Page[resources.AIModel], error) {
	sel := withAllColumns(s.db.NewSelect().Model((*aiModelRow)(nil)))
	filterAIModels(sel, f)
	key, err := orderAIModels(sel, f.Sort, f.Order == "desc", q.After)
	if err != nil {
		return resources.Page[resources.AIModel]{}, err
	}
	var convErr error
	conv := func(r aiModelRow) resources.AIModel {
		m, err := r.modelWithCaches()
		convErr = cmp.Or(convErr, err)
		return m
	}
	pg, err := scanPage(ctx, sel, q.Limit, conv, key)
	return pg, cmp.Or(err, convErr)
}

// filterAIModels adds the exact filters, the node-cache filter and the
// substring search.
func filterAIModels(sel *bun.SelectQuery, f resources.AIModelFilter) {
	whereIn(sel, "status", f.Status)
	for col, v := range map[string]string{"category": f.Category, "vendor": f.Vendor, "org": f.Org,
		"gateway_tier": f.GatewayTier, "serving_node": f.ServingNode} {
		if v != "" {
			sel.Where("? = ?", bun.Ident(col), v)
		}
	}
	if f.Gated != nil {
		sel.Where("gated = ?", *f.Gated)
	}
	if len(f.Cached) == 1 { // ready,none: every model
		ready := "EXISTS (SELECT 1 FROM node_caches c WHERE c.model_id = ?TableAlias.id AND c.status = ?)"
		if f.Cached[0] == resources.CachedNone {
			ready = "NOT " + ready
		}
		sel.Where(ready, resources.NodeCacheReady)
	}
	if f.Q != "" { // strpos, not LIKE: % and _ in q are plain characters
		sel.Where("(strpos(lower(repo), lower(?0)) > 0 OR strpos(lower(display_name), lower(?0)) > 0 "+
			"OR strpos(lower(coalesce(summary, '')), lower(?0)) > 0)", f.Q)
	}
}

// orderAIModels orders sel, starts it after the page key and returns how to
// build the key of a row.
func orderAIModels(sel *bun.SelectQuery, sort string, desc bool, after []string) (func(resources.AIModel) []string, error) {
	dir, cmp := "ASC", ">"
	if desc {
		dir, cmp = "DESC", "<"
	}
	if sort == "" || sort == "id" {
		sel.OrderExpr("id " + dir)
		if after == nil {
			return aiModelIDKey, nil
		}
		if len(after) != 1 {
			return nil, errBadKey
		}
		id, err := parseKey(after[0])
		if err != nil {
			return nil, errBadKey
		}
		sel.Where("id "+cmp+" ?", id)
		return aiModelIDKey, nil
	}
	value, ok := aiModelSortColumns[sort]
	if !ok {
		return nil, resources.Invalid("sort", resources.CodeValidationFailed, "unknown sort %q", sort)
	}
	col := bun.Ident(sort)
	sel.OrderExpr("? "+dir+" NULLS LAST, id "+dir, col)
	key := func(m resources.AIModel) []string { return []string{floatKey(value(m)), idString(m.ID)} }
	if after == nil {
		return key, nil
	}
	return key, afterSortValue(sel, col, cmp, after)
}

// afterSortValue starts sel after the key (value, id): past the value, or
// at the same value past the id; the null group comes after every value.
func afterSortValue(sel *bun.SelectQuery, col bun.Ident, cmp string, after []string) error {
	if len(after) != 2 {
		return errBadKey
	}
	id, err := parseKey(after[1])
	if err != nil {
		return errBadKey
	}
	if after[0] == nullKey {
		sel.Where("? IS NULL AND id "+cmp+" ?", col, id)
		return nil
	}
	v, err := strconv.ParseFloat(after[0], 64)
	if err != nil {
		return errBadKey
	}
	sel.Where("((?, id) "+cmp+" (?::double precision, ?) OR ? IS NULL)", col, v, id, col)
	return nil
}

func aiModelIDKey(m resources.AIModel) []string { return idKey(m.ID) }

// floatKey spells a sort value exactly (shortest round-tripping form).
func floatKey(v *float64) string {
	if v == nil {
		return nullKey
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// modelCacheRow is one node cache of a model, as the model's
// node_caches_json holds it.
type modelCacheRow struct {
	Hostname  string    `json:"hostname"`
	Status    string    `json:"status"`
	SizeGB    *float64  `json:"size_gb"`
	Path      *string   `json:"path"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (r modelCacheRow) ref() resources.NodeCacheRef {
	return resources.NodeCacheRef{Hostname: r.Hostname, Status: r.Status, SizeGB: r.SizeGB, Path: r.Path,
		UpdatedAt: r.UpdatedAt.UTC()}
}

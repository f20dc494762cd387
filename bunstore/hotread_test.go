package bunstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// TestGetAIModel_HotReadEqualsBunScan: the hot read (pgx directly) gives the
// same catalogue rows as Bun's scan of the same columns (the list), for a
// row with every member set, NULL everywhere it may be, and node caches.
func TestGetAIModel_HotReadEqualsBunScan(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO ai_nodes (hostname) VALUES ('gpu-a'), ('gpu-b')`,
		`INSERT INTO ai_models (repo, display_name, gated, status, location, offline_ready, nas_volume,
			nas_path, cluster_recipe, architecture, benchmarks, category, context_window, description,
			frontier_equiv, gateway_tier, license, min_target, model_card_url, notes, org, param_count_b,
			params, published, quant, serving_node, size_gb, strong_axis, summary, vendor, vendor_country)
		VALUES ('org/full', 'Full "quoted" ünïcode', true, 'ready', 'both', true, 'vol1', '/m/full',
			'vllm-tp2', 'moe', '{"mmlu": 88.50, "rank": 3, "tier": "gold", "big": 12345678901234567}',
			'coding', '128k', 'long text', 'gpt-x', 'premium', 'apache-2.0', '2xH100',
			'https://example.test/card', 'notes', 'org', 70.6, '70B', '2026-01', 'fp8', 'gpu-a',
			141.25, 'code', 'summary', 'Vendor', 'FR')`,
		`INSERT INTO ai_models (repo, display_name) VALUES ('org/bare', 'bare')`,
		`INSERT INTO node_caches (hostname, model_id, status, path, size_gb)
			SELECT h, id, s, p, z FROM ai_models,
			(VALUES ('gpu-b', 'copying', NULL, NULL), ('gpu-a', 'ready', '/c/full', 141.25)) AS c(h, s, p, z)
			WHERE repo = 'org/full'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	store := bunstore.NewStore(db)
	page, err := store.ListAIModels(ctx, resources.AIModelFilter{}, resources.PageQuery{Limit: 10})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("list: %v %d", err, len(page.Items))
	}
	if n := len(page.Items[0].NodeCaches); n != 2 {
		t.Fatalf("the full row has %d node caches, want 2", n)
	}
	// Again and again: later reads on a connection use its kept scan plans.
	for range 3 {
		for _, want := range page.Items {
			got, err := store.GetAIModel(ctx, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, *got); d != "" {
				t.Fatalf("%s (-list +get):\n%s", want.Repo, d)
			}
		}
	}
	_, err = store.GetAIModel(ctx, 999_999)
	if e, ok := resources.AsError(err); !ok || e.Code != resources.CodeAIModelNotFound {
		t.Fatalf("missing row: %v", err)
	}
}

// TestGetAIModel_ColumnAddedByANewerRelease_HotReadGoesOn: on a connection
// whose prepared hot read predates a newer release's migration, the read
// answers as before: PostgreSQL refuses the stale statement once ("cached
// plan must not change result type"), the read is tried again, and the
// column the row type does not know is not read.
func TestGetAIModel_ColumnAddedByANewerRelease_HotReadGoesOn(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	db.SetMaxOpenConns(1) // the same connection before and after the migration
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `INSERT INTO ai_models (repo, display_name) VALUES ('org/m', 'm')`); err != nil {
		t.Fatal(err)
	}
	store := bunstore.NewStore(db)
	before, err := store.GetAIModel(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE ai_models ADD COLUMN newer_release text DEFAULT 'x'`); err != nil {
		t.Fatal(err)
	}
	after, err := store.GetAIModel(ctx, 1)
	if err != nil {
		t.Fatalf("the hot read after a newer release's column: %v", err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Fatalf("(-before +after):\n%s", d)
	}
}

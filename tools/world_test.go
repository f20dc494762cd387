package tools

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// populate fills e's database with one or more records of every kind over
// REST and the portal (customer, tenant, user, project with a release
// operation, AI model, node, node cache, gateway key, service account,
// audit events) and returns an all-scopes token.
func populate(t *testing.T, e *env) string {
	t.Helper()
	ctx := context.Background()
	tok := e.token(allScopes()...)
	auth := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	post := func(path, body string, want int) map[string]any {
		r := e.do(http.MethodPost, api.Prefix+path, auth, body)
		if r.status != want {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		return r.json(t)
	}
	post("/customers", `{"short_name":"ACME","long_name":"Acme Corp","vcs_group":"acme",`+
		`"primary_contact_email":"jane@acme.example","primary_contact_name":"Jane Doe","notes":"<b>&</b>"}`, 201)
	post("/tenants", `{"customer_id":"1","slug":"acme-eu","name":"Acme EU"}`, 201)
	post("/users", `{"email":"ops@example.test","display_name":"Ops","roles":[]}`, 201)
	op := post("/projects", `{"customer_id":"1","short_name":"SHOP","name":"Web shop","kind":"cluster",`+
		`"components":["www","app-api"]}`, 202)
	apitest.PollOperation(t, e.api, tok, op["id"].(string), "succeeded")
	rel := post("/projects/1/release-promotions", `{"component":"www","target_env":"dev","version":"1.2.3"}`, 202)
	// Finished before any test reads it: tests of filters and snapshots expect it succeeded.
	apitest.PollOperation(t, e.api, tok, rel["id"].(string), "succeeded")
	post("/ai/gateway/keys", `{"name":"ci","tier":"code"}`, 201)
	post("/ai/models", `{"repo":"Qwen/Qwen3-Coder-30B","gateway_tier":"code","benchmarks":{"humaneval":91.2,"grade":"A"}}`, 201)
	if r := e.do(http.MethodPost, api.Prefix+"/brand/assets?kind=favicon", map[string]string{"Authorization": "Bearer " + tok,
		"Content-Type": "image/png"}, string(tinyPNG(t))); r.status != http.StatusCreated {
		t.Fatalf("upload a favicon: %d %s", r.status, r.body)
	}
	db := e.api.Store.DB()
	for _, q := range []string{
		`INSERT INTO ai_nodes (hostname, site, gpu_class, services) VALUES ('gpu-1', 'fra1', 'H100', '{jupyter}')`,
		`UPDATE ai_models SET status = 'owned', location = 'nas', nas_volume = 'models', nas_path = '/m/q' WHERE id = 1`,
		`INSERT INTO node_caches (hostname, model_id, status, path, size_gb) VALUES ('gpu-1', 1, 'ready', '/c/q', 61)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	serving, repo, role := "serving", "Qwen/Qwen3-Coder-30B", "head"
	e.api.Monitor.Set("gpu-1", resources.NodeLive{Status: &serving, Cluster: &resources.NodeCluster{Name: "fra1", Role: &role},
		Models: []resources.NodeModel{{Model: "qwen3-coder", Repo: &repo, State: &serving}}})
	if _, err := e.api.Portal.CreateServiceAccount(ctx, resources.Actor{Label: adminEmail}, resources.NewServiceAccount{Name: "ci",
		Description: "CI", Permissions: []string{resources.PermAIRead}}); err != nil {
		t.Fatal(err)
	}
	return tok
}

// toolArgs are the arguments each tool is called with on the populated
// world; a tool missing here fails the tests that call every tool.
var toolArgs = map[string]map[string]any{
	"get-ai-gateway": {}, "get-ai-gateway-key": {"key_id": "1"}, "get-ai-model": {"model_id": "1"},
	"get-ai-node": {"hostname": "gpu-1"}, "get-api-token": {"token_id": "1"}, "get-audit-event": {"event_id": "1"},
	"get-customer": {"customer_id": "1", "include": "vcs_status"}, "get-meta": {}, "get-operation": {"operation_id": "release:1"},
	"get-prod-lock": {"project_id": "1"}, "get-project": {"project_id": "1"},
	"get-release-operation": {"release_operation_id": "1"}, "get-release-state": {"project_id": "1"},
	"get-tenant": {"tenant_id": "1"}, "get-user": {"user_id": "1"}, "get-whoami": {},
	"list-ai-gateway-keys": {}, "list-ai-gateway-tiers": {}, "list-ai-models": {}, "list-ai-nodes": {"model": "1"},
	"list-api-tokens": {}, "list-audit-events": {}, "list-customers": {"include": "project_count"},
	"list-node-caches": {}, "list-permissions": {}, "list-projects": {"customer_status": "active"},
	"list-release-operations": {"project_id": "1"}, "list-fleet-release-operations": {"target_env": "dev"},
	"list-operations": {"since": "2000-01-01T00:00:00Z"}, "list-service-accounts": {}, "list-tenants": {}, "list-users": {},
	"get-brand": {}, "get-brand-asset": {"asset_id": "1"}, "list-brand-assets": {"kind": "favicon"}, "get-licence": {},
}

// bulkCreatedAt spreads bulk rows over the last hours, every third at one
// instant (ties within and across tables).
const bulkCreatedAt = `CASE WHEN n % 3 = 0 THEN '2026-01-01T00:00:00Z'::timestamptz
		        ELSE now() - n * interval '1 minute' END`

// tinyPNG is a 1×1 PNG image.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bigWorld adds, by SQL, 300 audit events with states of about 2 KB (a
// third of them at the same instant), 300 catalogue rows of about 3 KB with
// sizes (some null), 250 customers with notes and their primary tenants,
// 250 projects, 120 AI nodes and 240 node caches, and 300 operations and
// 300 release operations of about 1 KB (a third of each at one instant).
func bigWorld(t *testing.T, e *env) {
	t.Helper()
	pad := func(n int) string { return fmt.Sprintf("repeat('x', %d)", n) }
	for _, q := range []string{
		`INSERT INTO audit_events (occurred_at, actor, action, entity_type, entity_id, before_state, after_state)
		 SELECT CASE WHEN n % 3 = 0 THEN '2026-01-01T00:00:00Z'::timestamptz ELSE now() - n * interval '1 minute' END,
		        'bulk@example.test', 'bulk.change', 'bulk', n::text,
		        jsonb_build_object('text', ` + pad(900) + `), jsonb_build_object('text', ` + pad(900) + `)
		 FROM generate_series(1, 300) n`,
		`INSERT INTO ai_models (repo, display_name, summary, description, size_gb, param_count_b)
		 SELECT 'bulk/model-' || n, 'Model ' || n, ` + pad(500) + `, ` + pad(2500) + `,
		        CASE WHEN n % 7 = 0 THEN NULL ELSE (n % 40) * 1.5 END, n
		 FROM generate_series(1, 300) n`,
		`INSERT INTO customers (short_name, long_name, vcs_group, primary_contact_email, primary_contact_name,
		        billing_tier, customer_index, default_email_tier, edition, notes, status)
		 SELECT 'BULK' || n, 'Bulk customer ' || n, 'bulk-' || n, 'c' || n || '@bulk.example', 'Contact',
		        'PAYING', 100 + n, 3, 'sp', ` + pad(600) + `, CASE WHEN n % 5 = 0 THEN 'suspended' ELSE 'active' END
		 FROM generate_series(1, 250) n`,
		`INSERT INTO tenants (customer_id, slug, name, is_primary)
		 SELECT id, vcs_group, long_name, true FROM customers WHERE short_name LIKE 'BULK%'`,
		`INSERT INTO projects (customer_id, tenant_id, status, short_name, name, kind, components, domain)
		 SELECT t.customer_id, t.id, 'active', 'P' || t.id, 'Project ' || t.id, 'cluster', '{www,app-api}',
		        'p' || t.id || '.bulk.example'
		 FROM tenants t WHERE t.slug LIKE 'bulk-%'`,
		`INSERT INTO ai_nodes (hostname, site, gpu_class, specs_summary)
		 SELECT 'bulk-node-' || n, 'site-' || (n % 4), 'H100', '2x EPYC, 8x H100 80GB, 2 TiB RAM'
		 FROM generate_series(1, 120) n`,
		`INSERT INTO node_caches (hostname, model_id, status, path, size_gb)
		 SELECT 'bulk-node-' || (n % 120 + 1), m.id, 'ready', '/var/lib/platform/models/' || m.repo, 10
		 FROM generate_series(1, 240) n JOIN ai_models m ON m.repo = 'bulk/model-' || n`,
		`INSERT INTO operations (kind, status, target_type, target_id, error, result, created_at)
		 SELECT (ARRAY['node_cache_copy', 'node_cache_remove', 'project_provision'])[n % 3 + 1],
		        CASE WHEN n % 2 = 0 THEN 'failed' ELSE 'succeeded' END, 'node_cache', 'bulk-node-1/' || n,
		        CASE WHEN n % 2 = 0 THEN jsonb_build_object('code', 'checksum_mismatch', 'detail', ` + pad(800) + `) END,
		        CASE WHEN n % 2 = 1 THEN jsonb_build_object('status', 'ready', 'path', ` + pad(800) + `) END,
		        ` + bulkCreatedAt + `
		 FROM generate_series(1, 300) n`,
		`INSERT INTO release_operations (project_id, kind, component, target_env, version, status, requested_by,
		        requested_via, error, created_at)
		 SELECT p.id, 'promotion', 'www', 'dev', '1.0.' || n, CASE WHEN n % 2 = 0 THEN 'failed' ELSE 'succeeded' END,
		        'bulk@example.test', 'api',
		        CASE WHEN n % 2 = 0 THEN jsonb_build_object('code', 'pipeline_failed', 'detail', ` + pad(800) + `) END,
		        ` + bulkCreatedAt + `
		 FROM generate_series(1, 300) n,
		      LATERAL (SELECT id FROM projects WHERE short_name LIKE 'P%' ORDER BY id OFFSET n % 250 LIMIT 1) p`,
	} {
		if _, err := e.api.Store.DB().ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

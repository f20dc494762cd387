package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func aiEnv(t *testing.T) (*apitest.Env, string) {
	e := apitest.New(t, apitest.Options{})
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "ai", AllowDestroy: true, Scopes: []string{
		resources.PermAIRead, resources.PermAIWrite, resources.PermAIGatewayKeys, resources.PermAuditRead}})
}

func createModel(t *testing.T, e *apitest.Env, tok string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/v1/ai/models", tok, body)
	if r.Status != 201 {
		t.Fatalf("create %v: %d %s", body, r.Status, r.Body)
	}
	return r.JSON(t)
}

func aiSQL(t *testing.T, e *apitest.Env, sql string, args ...any) {
	t.Helper()
	if _, err := e.Store.DB().ExecContext(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

var optionalModelMembers = []string{"architecture", "benchmarks", "category", "context_window", "description",
	"frontier_equiv", "gateway_tier", "license", "min_target", "model_card_url", "notes", "org", "param_count_b",
	"params", "published", "quant", "serving_node", "size_gb", "strong_axis", "summary", "vendor", "vendor_country"}

func TestAIModels_Create_201PlannedDefaultsEveryMemberAndOneAuditEvent(t *testing.T) {
	e, tok := aiEnv(t)
	r := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "Qwen/Qwen3-8B"}, "X-Request-ID", "add-qwen")
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	if r.Header.Get("Location") != "/api/v1/ai/models/"+m["id"].(string) {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	want := map[string]any{"repo": "Qwen/Qwen3-8B", "display_name": "Qwen3-8B", "gated": false, "status": "planned",
		"location": nil, "offline_ready": false, "nas_volume": nil, "nas_path": nil, "cluster_recipe": nil}
	for _, k := range optionalModelMembers {
		want[k] = nil
	}
	for k, v := range want {
		if got, has := m[k]; !has || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, has, v)
		}
	}
	if c, ok := m["node_caches"].([]any); !ok || len(c) != 0 || m["created_at"] != m["updated_at"] {
		t.Fatalf("node_caches %v, created %v updated %v", m["node_caches"], m["created_at"], m["updated_at"])
	}
	if got := e.Do("GET", r.Header.Get("Location"), tok, nil).JSON(t); fmt.Sprint(got) != fmt.Sprint(m) {
		t.Fatalf("read differs from create: %v", got)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=ai_model")
	if len(items) != 1 || items[0]["action"] != "ai_model.create" || items[0]["request_id"] != "add-qwen" ||
		items[0]["entity_id"] != m["id"] {
		t.Fatalf("events: %v", items)
	}
}

func TestAIModels_Create_RepoPatternLengthAndUnique(t *testing.T) {
	e, tok := aiEnv(t)
	for _, repo := range []string{"", "org", "org/", "/name", "a/b/c", ".org/x", "org/-x", "org/_x", "org/a..b", "or..g/x",
		"org/a b", "org/ä", "org/x!", "o/" + strings.Repeat("n", 95)} {
		m := assertProblem(t, e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": repo}), 422, "validation_failed")
		if m["field"] != "repo" {
			t.Errorf("%q: field %v", repo, m["field"])
		}
	}
	assertProblem(t, e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"display_name": "x"}), 422, "validation_failed")
	longest := "o/" + strings.Repeat("n", 94)
	for _, repo := range []string{longest, "0rg./n.a_m-e.", "a/b"} {
		createModel(t, e, tok, map[string]any{"repo": repo})
	}
	m := assertProblem(t, e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "a/b"}), 409, "ai_model_repo_taken")
	if m["field"] != "repo" || count(t, e, "SELECT count(*) FROM ai_models") != 3 {
		t.Fatalf("field %v", m["field"])
	}
}

func TestAIModels_Create_ReadOnlyServerAndUnknownMembers_422(t *testing.T) {
	e, tok := aiEnv(t)
	for member, v := range map[string]any{"status": "planned", "location": nil, "offline_ready": false,
		"nas_volume": nil, "nas_path": "/x", "cluster_recipe": "r", "node_caches": []any{}, "id": "1", "colour": "red"} {
		m := assertProblem(t, e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "a/b", member: v}), 422, "validation_failed")
		if m["field"] != member {
			t.Errorf("%s: field %v", member, m["field"])
		}
	}
	if n := count(t, e, "SELECT count(*) FROM ai_models"); n != 0 {
		t.Fatalf("rows written: %d", n)
	}
}

// limitCase is one member at its bound (accepted) and one past it (422).
type limitCase struct {
	member   string
	at, past any
}

func modelLimitCases() []limitCase {
	var cases []limitCase
	for member, n := range resources.AIModelTextLimits {
		cases = append(cases, limitCase{member, strings.Repeat("é", n), strings.Repeat("é", n+1)})
	}
	bench := func(n int, v any) map[string]any {
		b := map[string]any{}
		for i := range n {
			b[fmt.Sprintf("bench-%03d", i)] = v
		}
		return b
	}
	return append(cases, limitCase{"display_name", strings.Repeat("d", 255), strings.Repeat("d", 256)},
		limitCase{"display_name", "d", ""},
		limitCase{"param_count_b", 9999999, 9999999.5}, limitCase{"param_count_b", 0, -0.001},
		limitCase{"size_gb", 99999999, 99999999.01}, limitCase{"size_gb", 0, -1},
		limitCase{"benchmarks", bench(100, 1.5), bench(101, 1)}, limitCase{"benchmarks", bench(2, "87.1%"), bench(1, true)},
		limitCase{"benchmarks", map[string]any{"int": 3, "neg": -2}, bench(1, []any{1})},
		limitCase{"benchmarks", map[string]any{}, bench(1, map[string]any{"x": 1})},
		limitCase{"benchmarks", nil, "not an object"}) // a null score: TestHarden_BenchmarksMergePatch_*
}

func TestAIModels_Limits_EveryWritableMemberAtAndPastTheBound(t *testing.T) {
	e, tok := aiEnv(t)
	path := "/api/v1/ai/models/" + createModel(t, e, tok, map[string]any{"repo": "base/patched"})["id"].(string)
	for i, c := range modelLimitCases() {
		created := createModel(t, e, tok, map[string]any{"repo": fmt.Sprintf("lim/m%d", i), c.member: c.at})
		if c.member == "benchmarks" { // a patch merges into what is stored: start from none
			e.Do("PATCH", path, tok, map[string]any{c.member: nil})
		}
		if r := e.Do("PATCH", path, tok, map[string]any{c.member: c.at}); r.Status != 200 ||
			fmt.Sprint(r.JSON(t)[c.member]) != fmt.Sprint(created[c.member]) {
			t.Errorf("patch %s at the bound: %d %s", c.member, r.Status, r.Body)
		}
		for verb, r := range map[string]*apitest.Response{
			"create": e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "lim/past", c.member: c.past}),
			"patch":  e.Do("PATCH", path, tok, map[string]any{c.member: c.past}),
		} {
			if m := assertProblem(t, r, 422, "validation_failed"); !strings.HasPrefix(m["field"].(string), c.member) {
				t.Errorf("%s %s past the bound: field %v", verb, c.member, m["field"])
			}
		}
	}
	if n := count(t, e, "SELECT count(*) FROM ai_models WHERE repo = 'lim/past'"); n != 0 {
		t.Fatalf("a refused create was written")
	}
}

func TestAIModels_Patch_RepoFrozen_422ImmutableField(t *testing.T) {
	e, tok := aiEnv(t)
	path := "/api/v1/ai/models/" + createModel(t, e, tok, map[string]any{"repo": "a/b"})["id"].(string)
	if r := e.Do("PATCH", path, tok, map[string]any{"repo": "a/b"}); r.Status != 200 {
		t.Fatalf("current repo refused: %d %s", r.Status, r.Body)
	}
	if m := assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"repo": "a/c"}), 422, "immutable_field"); m["field"] != "repo" {
		t.Errorf("field %v", m["field"])
	}
	if m := assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"repo": nil}), 422, "validation_failed"); m["field"] != "repo" {
		t.Errorf("null repo: field %v", m["field"])
	}
}

func TestAIModels_Patch_ReadOnlyMembersOnlyTheirCurrentValue_422ReadOnlyField(t *testing.T) {
	e, tok := aiEnv(t)
	id := createModel(t, e, tok, map[string]any{"repo": "a/b"})["id"].(string)
	path := "/api/v1/ai/models/" + id
	planned := map[string]any{"status": "planned", "location": nil, "offline_ready": false, "nas_volume": nil}
	if r := e.Do("PATCH", path, tok, planned); r.Status != 200 {
		t.Fatalf("current values refused: %d %s", r.Status, r.Body)
	}
	aiSQL(t, e, "UPDATE ai_models SET status = 'owned', location = 'nas', nas_volume = 'models', offline_ready = true WHERE id = ?", id)
	owned := map[string]any{"status": "owned", "location": "nas", "offline_ready": true, "nas_volume": "models"}
	if r := e.Do("PATCH", path, tok, owned); r.Status != 200 {
		t.Fatalf("current values refused: %d %s", r.Status, r.Body)
	}
	for member, v := range planned {
		m := assertProblem(t, e.Do("PATCH", path, tok, map[string]any{member: v}), 422, "read_only_field")
		if m["field"] != member {
			t.Errorf("%s: field %v", member, m["field"])
		}
	}
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"status": "serving"}), 422, "read_only_field")
	for _, member := range []string{"nas_path", "cluster_recipe", "node_caches", "colour"} {
		m := assertProblem(t, e.Do("PATCH", path, tok, map[string]any{member: nil}), 422, "validation_failed")
		if m["field"] != member {
			t.Errorf("%s: field %v", member, m["field"])
		}
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'ai_model.update'"); n != 0 {
		t.Fatalf("no-op and refused patches must not be audited: %d", n)
	}
}

func TestAIModels_Patch_NullClearsMetadataNotDisplayNameOrGated(t *testing.T) {
	e, tok := aiEnv(t)
	created := createModel(t, e, tok, map[string]any{"repo": "a/b", "notes": "n", "size_gb": 4.5, "gated": true,
		"benchmarks": map[string]any{"swe": 61.2, "arena": "1402"}})
	path := "/api/v1/ai/models/" + created["id"].(string)
	m := e.Do("PATCH", path, tok, `{"notes":null,"size_gb":null,"benchmarks":null,"org":"","gated":false}`, "Content-Type", mergePatch).JSON(t)
	if m["notes"] != nil || m["size_gb"] != nil || m["benchmarks"] != nil || m["org"] != "" || m["gated"] != false ||
		m["updated_at"] == created["updated_at"] || m["created_at"] != created["created_at"] {
		t.Fatalf("patched: %v", m)
	}
	for _, member := range []string{"display_name", "gated"} {
		r := e.Do("PATCH", path, tok, `{"`+member+`":null}`, "Content-Type", mergePatch)
		if m := assertProblem(t, r, 422, "validation_failed"); m["field"] != member {
			t.Errorf("null %s: field %v", member, m["field"])
		}
	}
	assertProblem(t, e.Do("PATCH", "/api/v1/ai/models/999", tok, map[string]any{"notes": "x"}), 404, "ai_model_not_found")
	items, _ := auditItems(t, e, tok, "?action=ai_model.update")
	if len(items) != 1 || items[0]["before_state"].(map[string]any)["notes"] != "n" || items[0]["after_state"].(map[string]any)["notes"] != nil {
		t.Fatalf("update events: %v", items)
	}
}

func TestAIModels_Read_NodeCachesFromTheCacheTable(t *testing.T) {
	e, tok := aiEnv(t)
	id := createModel(t, e, tok, map[string]any{"repo": "a/b"})["id"].(string)
	createModel(t, e, tok, map[string]any{"repo": "a/other"})
	aiSQL(t, e, "INSERT INTO ai_nodes (hostname) VALUES ('gpu-02'), ('gpu-01')")
	aiSQL(t, e, `INSERT INTO node_caches (hostname, model_id, status, path, size_gb) VALUES
		('gpu-02', ?, 'copying', NULL, NULL), ('gpu-01', ?, 'ready', '/models/a/b', 16.5)`, id, id)
	caches := e.Do("GET", "/api/v1/ai/models/"+id, tok, nil).JSON(t)["node_caches"].([]any)
	first := caches[0].(map[string]any)
	if len(caches) != 2 || first["hostname"] != "gpu-01" || first["status"] != "ready" || first["size_gb"] != 16.5 ||
		first["path"] != "/models/a/b" || first["updated_at"] == nil || caches[1].(map[string]any)["path"] != nil {
		t.Fatalf("caches: %v", caches)
	}
	items := e.Do("GET", "/api/v1/ai/models", tok, nil).JSON(t)["items"].([]any)
	if len(items[0].(map[string]any)["node_caches"].([]any)) != 2 || len(items[1].(map[string]any)["node_caches"].([]any)) != 0 {
		t.Fatalf("list caches: %v", items)
	}
	patched := e.Do("PATCH", "/api/v1/ai/models/"+id, tok, map[string]any{"notes": "n"}).JSON(t)
	if d := cmp.Diff(caches, patched["node_caches"]); d != "" {
		t.Fatalf("PATCH answer's caches (-GET +PATCH):\n%s", d)
	}
	assertProblem(t, e.Do("GET", "/api/v1/ai/models/999", tok, nil), 404, "ai_model_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/ai/models/x1", tok, nil), 400, "invalid_parameter")
}

func TestAIModels_Delete_PlannedWithoutCaches_204ThenGone(t *testing.T) {
	e, tok := aiEnv(t)
	path := "/api/v1/ai/models/" + createModel(t, e, tok, map[string]any{"repo": "a/b"})["id"].(string)
	assertProblem(t, e.Do("DELETE", path, e.Token(resources.PermAIWrite), nil), 403, "destroy_not_allowed")
	if r := e.Do("DELETE", path, tok, nil); r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("DELETE", path, tok, nil), 404, "ai_model_not_found")
	items, _ := auditItems(t, e, tok, "?action=ai_model.delete")
	if len(items) != 1 || items[0]["before_state"].(map[string]any)["repo"] != "a/b" || items[0]["after_state"] != nil {
		t.Fatalf("delete events: %v", items)
	}
	createModel(t, e, tok, map[string]any{"repo": "a/b"}) // the repo is free again
}

func TestAIModels_Delete_WithNodeCacheOrNotPlanned_409HasWeights(t *testing.T) {
	e, tok := aiEnv(t)
	cached := createModel(t, e, tok, map[string]any{"repo": "a/cached"})["id"].(string)
	owned := createModel(t, e, tok, map[string]any{"repo": "a/owned"})["id"].(string)
	aiSQL(t, e, "INSERT INTO ai_nodes (hostname) VALUES ('gpu-01')")
	aiSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-01', ?, 'ready')", cached)
	aiSQL(t, e, "UPDATE ai_models SET status = 'owned' WHERE id = ?", owned)
	m := assertProblem(t, e.Do("DELETE", "/api/v1/ai/models/"+cached, tok, nil), 409, "ai_model_has_weights")
	if m["blockers"].(map[string]any)["node_caches"] != 1.0 {
		t.Fatalf("blockers: %v", m["blockers"])
	}
	assertProblem(t, e.Do("DELETE", "/api/v1/ai/models/"+owned, tok, nil), 409, "ai_model_has_weights")
	if n := count(t, e, "SELECT count(*) FROM ai_models"); n != 2 {
		t.Fatalf("rows: %d", n)
	}
}

// TestAIModels_Delete_OwnedWithoutCaches_409BlockersNameTheCentralCopy: a
// 409 refusing a destroy says what blocks it (contract, Errors: blockers).
// An owned model without node caches is blocked by its central copy, not
// by "node_caches": 0 alone; a planned one with a cache has no central one.
func TestAIModels_Delete_OwnedWithoutCaches_409BlockersNameTheCentralCopy(t *testing.T) {
	e, tok := aiEnv(t)
	owned := createModel(t, e, tok, map[string]any{"repo": "a/owned"})["id"].(string)
	cached := createModel(t, e, tok, map[string]any{"repo": "a/cached"})["id"].(string)
	aiSQL(t, e, "UPDATE ai_models SET status = 'owned' WHERE id = ?", owned)
	aiSQL(t, e, "INSERT INTO ai_nodes (hostname) VALUES ('gpu-01')")
	aiSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-01', ?, 'ready')", cached)
	for id, want := range map[string]string{owned: "map[central_copy:1 node_caches:0]",
		cached: "map[central_copy:0 node_caches:1]"} {
		m := assertProblem(t, e.Do("DELETE", "/api/v1/ai/models/"+id, tok, nil), 409, "ai_model_has_weights")
		if got := fmt.Sprint(m["blockers"]); got != want {
			t.Errorf("model %s: blockers %s, want %s", id, got, want)
		}
	}
}

func TestAIModels_Permissions_ReadersReadWritersWrite(t *testing.T) {
	e, tok := aiEnv(t)
	path := "/api/v1/ai/models/" + createModel(t, e, tok, map[string]any{"repo": "a/b"})["id"].(string)
	reader := e.Token(resources.PermAIRead)
	for _, p := range []string{path, "/api/v1/ai/models"} {
		if r := e.Do("GET", p, reader, nil); r.Status != 200 {
			t.Fatalf("reader %s: %d", p, r.Status)
		}
	}
	assertProblem(t, e.Do("POST", "/api/v1/ai/models", reader, map[string]any{"repo": "a/c"}), 403, "forbidden")
	assertProblem(t, e.Do("PATCH", path, reader, map[string]any{"notes": "x"}), 403, "forbidden")
	m := assertProblem(t, e.Do("GET", path, e.Token(resources.PermAIGatewayKeys), nil), 403, "forbidden")
	if fmt.Sprint(m["required"]) != "[ai-read-global ai-write-global]" {
		t.Fatalf("required: %v", m["required"])
	}
}

func TestAIModels_Create_IdempotencyKeyReplaysOneRow(t *testing.T) {
	e, tok := aiEnv(t)
	body := map[string]any{"repo": "a/b"}
	first := e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "add-a-b")
	again := e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "add-a-b")
	if first.Status != 201 || again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" ||
		string(first.Body) != string(again.Body) || count(t, e, "SELECT count(*) FROM ai_models") != 1 {
		t.Fatalf("%d %d %s", first.Status, again.Status, again.Body)
	}
}

func TestAIModels_Schema_LimitsAndRepoPatternEqualTheDomainRules(t *testing.T) {
	e, _ := aiEnv(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					MaxLength *int   `json:"maxLength"`
					Pattern   string `json:"pattern"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, schema := range []string{"AIModelCreate", "AIModelPatch", "AIModel"} {
		for member, limit := range resources.AIModelTextLimits {
			if got := doc.Components.Schemas[schema].Properties[member].MaxLength; got == nil || *got != limit {
				t.Errorf("%s.%s maxLength %v, want %d", schema, member, got, limit)
			}
		}
	}
	if got := doc.Components.Schemas["AIModelCreate"].Properties["repo"].Pattern; got != resources.AIModelRepoPattern {
		t.Errorf("repo pattern %q", got)
	}
}

package api_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// modelFiles are a small model's weights: a config and two shards.
func modelFiles(repo string) map[string][]byte {
	shard := func(n int, b byte) []byte {
		out := make([]byte, n)
		for i := range out {
			out[i] = b + byte(i%251)
		}
		return out
	}
	return map[string][]byte{"config.json": []byte(`{"repo":"` + repo + `"}`),
		"model-00001-of-00002.safetensors": shard(96<<10, 1), "model-00002-of-00002.safetensors": shard(64<<10, 7)}
}

// modelBytes is what modelFiles holds in all.
func modelBytes(repo string) int64 {
	var n int64
	for _, b := range modelFiles(repo) {
		n += int64(len(b))
	}
	return n
}

// agentEnv is nodeEnv with real agents enrolled on gpu-01 and gpu-02 (not
// on gpu-01-vm1), each with the options' limits.
func agentEnv(t *testing.T, o apitest.Options, cfg nodeagent.Config) (*apitest.Env, string, map[string]*apitest.Agent) {
	e, tok := nodeEnv(t, o)
	agents := map[string]*apitest.Agent{}
	for _, h := range []string{"gpu-01", "gpu-02"} {
		agents[h] = e.StartAgent(h, cfg)
	}
	return e, tok, agents
}

// cacheModel inserts a catalogue row by SQL (the catalogue owns ai_models),
// with a central copy in the Env's store when central.
func cacheModel(t *testing.T, e *apitest.Env, repo string, central bool) string {
	t.Helper()
	if central {
		e.CentralCopy(repo, modelFiles(repo))
	}
	var id int64
	q := "INSERT INTO ai_models (repo, display_name, status, size_gb) VALUES (?, ?, 'planned', NULL) RETURNING id"
	if central {
		q = "INSERT INTO ai_models (repo, display_name, status, location, nas_volume, nas_path, size_gb) " +
			"VALUES (?, ?, 'owned', 'nas', 'models', '/models/' || ?, 16.5) RETURNING id"
	}
	args := []any{repo, repo}
	if central {
		args = append(args, repo)
	}
	if err := e.Store.DB().NewRaw(q, args...).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return formatInt(id)
}

// modelPlacement reads offline_ready and location of a model by SQL.
func modelPlacement(t *testing.T, e *apitest.Env, id string) (bool, *string) {
	t.Helper()
	var row struct {
		OfflineReady bool    `bun:"offline_ready"`
		Location     *string `bun:"location"`
	}
	if err := e.Store.DB().NewRaw("SELECT offline_ready, location FROM ai_models WHERE id = ?", parseInt(t, id)).
		Scan(context.Background(), &row); err != nil {
		t.Fatal(err)
	}
	return row.OfflineReady, row.Location
}

// copyToNode PUTs a node cache and checks the 202 operation.
func copyToNode(t *testing.T, e *apitest.Env, tok, host, model string, headers ...string) map[string]any {
	t.Helper()
	r := e.Do("PUT", "/api/v1/node-caches/"+host+"/"+model, tok, nil, headers...)
	op := r.JSON(t)
	if r.Status != 202 || op["kind"] != "node_cache_copy" || r.Header.Get("Location") != "/api/v1/operations/"+op["id"].(string) {
		t.Fatalf("copy: %d %v %s", r.Status, r.Header, r.Body)
	}
	return op
}

// assertCopied checks that the node's cache holds exactly the model's
// files, byte for byte, at the path the database records.
func assertCopied(t *testing.T, a *apitest.Agent, repo string) {
	t.Helper()
	for name, want := range modelFiles(repo) {
		got, err := os.ReadFile(filepath.Join(a.CacheRoot, repo, name))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s on the node: %v (%d bytes, want %d)", name, err, len(got), len(want))
		}
	}
}

func TestNodeCaches_Copy_PutToSucceededOperation_CacheReadyModelOfflineReadyBoth(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "Qwen/Qwen3-Coder-30B", true)
	op := copyToNode(t, e, tok, "gpu-01", model, "X-Request-ID", "copy-1")
	if tgt := op["target"].(map[string]any); tgt["type"] != "node_cache" || tgt["id"] != "gpu-01/"+model {
		t.Fatalf("target: %v", tgt)
	}
	done := apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	if res := done["result"].(map[string]any); res["status"] != "ready" || res["already_ready"] != false {
		t.Fatalf("result: %v", res)
	}
	total := float64(modelBytes("Qwen/Qwen3-Coder-30B"))
	if p, _ := done["progress"].(map[string]any); p["bytes_done"] != total || p["bytes_total"] != total {
		t.Fatalf("progress of the finished copy: %v", done["progress"])
	}
	assertCopied(t, agents["gpu-01"], "Qwen/Qwen3-Coder-30B")
	caches := e.Do("GET", "/api/v1/node-caches?hostname=gpu-01", tok, nil).JSON(t)["items"].([]any)
	c := caches[0].(map[string]any)
	if len(caches) != 1 || c["status"] != "ready" || c["model_id"] != model || c["size_gb"] != total/1e9 ||
		c["path"] != filepath.Join(agents["gpu-01"].CacheRoot, "Qwen/Qwen3-Coder-30B") {
		t.Fatalf("caches: %v", caches)
	}
	if ready, loc := modelPlacement(t, e, model); !ready || loc == nil || *loc != "both" {
		t.Fatalf("model: offline_ready %v location %v", ready, loc)
	}
	row := e.Do("GET", "/api/v1/ai/models/"+model, tok, nil).JSON(t) // the catalogue shows the cache
	refs := row["node_caches"].([]any)
	if len(refs) != 1 || refs[0].(map[string]any)["hostname"] != "gpu-01" || refs[0].(map[string]any)["status"] != "ready" ||
		row["offline_ready"] != true || row["location"] != "both" {
		t.Fatalf("catalogue row: %v", row)
	}
	events, _ := auditItems(t, e, tok, "?entity_type=node_cache")
	if len(events) != 2 || events[0]["action"] != "node_cache.ready" || events[0]["actor"] != "system" ||
		events[1]["action"] != "node_cache.copy" || events[1]["actor"] != apitest.AdminEmail || events[1]["request_id"] != "copy-1" {
		t.Fatalf("events: %v", events)
	}
}

func TestNodeCaches_Copy_IdempotentRetriesStartNoSecondCopy(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			r := e.Do("PUT", "/api/v1/node-caches/gpu-02/"+model, tok, nil, "Idempotency-Key", "cache-gpu-02")
			if r.Status != 202 && r.Status != 429 {
				t.Errorf("racing retry: %d %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	first := copyToNode(t, e, tok, "gpu-02", model, "Idempotency-Key", "cache-gpu-02")
	again := e.Do("PUT", "/api/v1/node-caches/gpu-02/"+model, tok, nil, "Idempotency-Key", "cache-gpu-02")
	if again.Status != 202 || again.JSON(t)["id"] != first["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s", again.Status, again.Body)
	}
	apitest.PollOperation(t, e, tok, first["id"].(string), "succeeded")
	if ops, jobs := count(t, e, "SELECT count(*) FROM operations WHERE kind = 'node_cache_copy'"),
		count(t, e, "SELECT count(*) FROM river_job WHERE kind = 'node_cache_copy'"); ops != 1 || jobs != 1 {
		t.Fatalf("operations %d, jobs %d", ops, jobs)
	}
	// A new request for a ready cache copies nothing: 200 with a finished operation.
	r := e.Do("PUT", "/api/v1/node-caches/gpu-02/"+model, tok, nil, "Idempotency-Key", "cache-gpu-02-again")
	op := r.JSON(t)
	if r.Status != 200 || op["status"] != "succeeded" || op["result"].(map[string]any)["already_ready"] != true {
		t.Fatalf("ready cache: %d %s", r.Status, r.Body)
	}
	if jobs := count(t, e, "SELECT count(*) FROM river_job WHERE kind = 'node_cache_copy'"); jobs != 1 {
		t.Fatalf("jobs after a PUT on a ready cache: %d", jobs)
	}
}

func TestNodeCaches_Delete_RemovesTheWeightsOnTheNodeAndRecomputesModelPlacement(t *testing.T) {
	e, tok, agents := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	for _, host := range []string{"gpu-01", "gpu-02"} {
		apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, host, model)["id"].(string), "succeeded")
	}
	noDestroy := e.Token(resources.PermAIWrite)
	assertProblem(t, e.Do("DELETE", "/api/v1/node-caches/gpu-01/"+model, noDestroy, nil), 403, "destroy_not_allowed")
	for i, host := range []string{"gpu-01", "gpu-02"} {
		r := e.Do("DELETE", "/api/v1/node-caches/"+host+"/"+model, tok, nil, "Idempotency-Key", "rm-"+host)
		op := r.JSON(t)
		if r.Status != 202 || op["kind"] != "node_cache_remove" || r.Header.Get("Location") != "/api/v1/operations/"+op["id"].(string) {
			t.Fatalf("delete %s: %d %s", host, r.Status, r.Body)
		}
		apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
		if _, err := os.Stat(filepath.Join(agents[host].CacheRoot, "org/model")); !os.IsNotExist(err) {
			t.Fatalf("the weights are still on %s: %v", host, err)
		}
		ready, loc := modelPlacement(t, e, model)
		if want := i == 0; ready != want || (want && *loc != "both") || (!want && *loc != "nas") {
			t.Fatalf("after removing %s: offline_ready %v location %v", host, ready, *loc)
		}
	}
	if items := e.Do("GET", "/api/v1/node-caches?model_id="+model, tok, nil).JSON(t)["items"].([]any); len(items) != 0 {
		t.Fatalf("caches left: %v", items)
	}
	if events, _ := auditItems(t, e, tok, "?action=node_cache.removed"); len(events) != 2 || events[0]["actor"] != "system" {
		t.Fatalf("removal events: %v", events)
	}
	assertProblem(t, e.Do("DELETE", "/api/v1/node-caches/gpu-01/"+model, tok, nil), 404, "node_cache_not_found")
}

func TestNodeCaches_LocalOnlyModel_LocationLocalThenNowhere(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/local", false)
	aiNodeSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-01', ?, 'ready')", parseInt(t, model))
	op := e.Do("DELETE", "/api/v1/node-caches/gpu-01/"+model, tok, nil).JSON(t)
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	if ready, loc := modelPlacement(t, e, model); ready || loc != nil {
		t.Fatalf("no copy anywhere: %v %v", ready, loc)
	}
}

func TestNodeCaches_Refusals_404UnknownNodeModel_409NotInStoreAndBusy(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	central, planned := cacheModel(t, e, "org/central", true), cacheModel(t, e, "org/planned", false)
	assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-99/"+central, tok, nil), 404, "ai_node_not_found")
	assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-01/999", tok, nil), 404, "ai_model_not_found")
	assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-01/"+planned, tok, nil), 409, "ai_model_not_in_store")
	assertProblem(t, e.Do("DELETE", "/api/v1/node-caches/gpu-99/"+central, tok, nil), 404, "ai_node_not_found")
	assertProblem(t, e.Do("DELETE", "/api/v1/node-caches/gpu-01/999", tok, nil), 404, "ai_model_not_found")
	assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-01/x", tok, nil), 400, "invalid_parameter")
	noAgent := assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-01-vm1/"+central, tok, nil), 409,
		"node_agent_not_enrolled")
	if noAgent["detail"] != resources.NotEnrolled("gpu-01-vm1").Detail {
		t.Fatalf("not enrolled: %v", noAgent)
	}
	id := parseInt(t, central)
	aiNodeSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-02', ?, 'removing')", id)
	busy := assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-02/"+central, tok, nil), 409, "node_cache_busy")
	if busy["detail"] == "" {
		t.Fatal("no detail")
	}
	reader := e.Token(resources.PermAIRead)
	assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-01/"+central, reader, nil), 403, "forbidden")
	if n := count(t, e, "SELECT count(*) FROM operations"); n != 0 {
		t.Fatalf("refusals started %d operations", n)
	}
}

func aiNodeSQL(t *testing.T, e *apitest.Env, sql string, args ...any) {
	t.Helper()
	if _, err := e.Store.DB().ExecContext(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func TestNodeCaches_Copy_WhileACopyRuns_AnswersThatOperationWithoutAKey(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	model := cacheModel(t, e, "org/model", true)
	aiNodeSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-01', ?, 'copying')", parseInt(t, model))
	var running int64
	if err := e.Store.DB().NewRaw("INSERT INTO operations (kind, status, target_type, target_id) "+
		"VALUES ('node_cache_copy', 'running', 'node_cache', ?) RETURNING id", "gpu-01/"+model).
		Scan(context.Background(), &running); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if op := copyToNode(t, e, tok, "gpu-01", model); op["id"] != formatInt(running) || op["status"] != "running" {
			t.Fatalf("copy while copying: %v", op)
		}
	}
	if jobs := count(t, e, "SELECT count(*) FROM river_job WHERE kind = 'node_cache_copy'"); jobs != 0 {
		t.Fatalf("a running copy got %d more jobs", jobs)
	}
}

func TestNodeCaches_Contract_PutDocuments200And202_DeleteIsADestroy(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	doc := e.Do("GET", "/api/v1/openapi.json", tok, nil).JSON(t)
	item := doc["paths"].(map[string]any)["/node-caches/{hostname}/{model_id}"].(map[string]any)
	put, del := item["put"].(map[string]any), item["delete"].(map[string]any)
	for _, code := range []string{"200", "202", "404", "409"} {
		if put["responses"].(map[string]any)[code] == nil {
			t.Errorf("PUT lacks %s", code)
		}
	}
	if put["operationId"] != "copy-node-cache" || del["operationId"] != "remove-node-cache" || del["x-destroy"] != true {
		t.Fatalf("put %v\ndelete %v", put["operationId"], del)
	}
}

// TestNodeCaches_CopyWhileRemoving_409BusyWithoutBlockers: a PUT while the
// cache's removal runs is refused by that removal; it is no destroy, so the
// 409 names no blockers (those are for a 409 refusing a destroy).
func TestNodeCaches_CopyWhileRemoving_409BusyWithoutBlockers(t *testing.T) {
	e, tok, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	central := cacheModel(t, e, "org/central", true)
	aiNodeSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-02', ?, 'removing')",
		parseInt(t, central))
	put := assertProblem(t, e.Do("PUT", "/api/v1/node-caches/gpu-02/"+central, tok, nil), 409, "node_cache_busy")
	if _, has := put["blockers"]; has {
		t.Fatalf("a refused copy names blockers: %v", put)
	}
}

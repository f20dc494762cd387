package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/prometheus"
	"platformapi/resources/prometheus/prometheustest"
)

// liveFields are the AI node members monitoring fills.
var liveFields = []string{"cluster", "collector_stale", "cpu_util_pct", "disk_used_pct", "gpu_count", "gpu_temp_max_c",
	"gpu_util_avg_pct", "load1", "mem_used_pct", "models", "online", "role", "status", "throttle_active",
	"uptime_seconds", "vram_total_bytes", "vram_used_bytes"}

const nodeRoster = `nodes:
  - {hostname: gpu-01, gpu_class: H100, site: fra1, mgmt_ip: 10.0.0.1, services: [jupyter]}
  - {hostname: gpu-01-vm1, is_virtual: true, parent_host: gpu-01, vmid: 101, gpu_class: H100, site: fra1}
  - {hostname: gpu-02, gpu_class: L40S, site: ams1}
`

// nodeEnv starts an Env (monitoring o.Monitor, else the simulated one)
// with the roster imported and a token holding the AI keys.
func nodeEnv(t *testing.T, o apitest.Options) (*apitest.Env, string) {
	e := apitest.New(t, o)
	importNodes(t, e, nodeRoster)
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "ai", AllowDestroy: true,
		Scopes: []string{resources.PermAIRead, resources.PermAIWrite, resources.PermAuditRead}})
}

func importNodes(t *testing.T, e *apitest.Env, yaml string) resources.InventoryImport {
	t.Helper()
	f, err := resources.ParseInventory("roster.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Store.ImportInventory(context.Background(), resources.Actor{Label: apitest.AdminEmail}, f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func nodeItems(t *testing.T, page map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, it := range page["items"].([]any) {
		n := it.(map[string]any)
		out[n["hostname"].(string)] = n
	}
	return out
}

func assertLiveNull(t *testing.T, n map[string]any) {
	t.Helper()
	for _, k := range liveFields {
		if v, has := n[k]; !has || v != nil {
			t.Errorf("%s: %s = %v, want null", n["hostname"], k, v)
		}
	}
	if n["monitoring_reachable"] != false {
		t.Errorf("%s: monitoring_reachable %v", n["hostname"], n["monitoring_reachable"])
	}
}

func TestAINodes_MonitoringUp_LiveValuesFromPrometheusInOneQueryPerRequest(t *testing.T) {
	fake := prometheustest.New(t)
	f := prometheustest.Field
	fake.Set(f("gpu-01:9100", "online", 1), f("gpu-01:9100", "cpu_util_pct", 12.5), f("gpu-01:9400", "gpu_count", 8),
		f("gpu-01:9400", "vram_total_bytes", 640e9), f("gpu-01:9100", "collector_age_seconds", 3),
		f("gpu-01:9100", "info", 1, "role", "inference", "status", "serving", "cluster", "fra1", "cluster_role", "head"),
		f("gpu-01:9100", "model", 61e9, "model", "qwen3-coder", "repo", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "state", "serving"),
		f("gpu-02:9100", "online", 1), f("gpu-02:9100", "collector_age_seconds", 31), f("gpu-02:9100", "load1", 0.25))
	e, tok := nodeEnv(t, apitest.Options{Monitor: prometheus.New(prometheus.Config{URL: fake.URL})})
	page := e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t)
	if page["monitoring_reachable"] != true || fake.Calls() != 1 {
		t.Fatalf("page: %v, %d queries", page, fake.Calls())
	}
	nodes := nodeItems(t, page)
	one := nodes["gpu-01"]
	model := one["models"].([]any)[0].(map[string]any)
	if one["monitoring_reachable"] != true || one["online"] != true || one["cpu_util_pct"] != 12.5 || one["gpu_count"] != 8.0 ||
		one["vram_total_bytes"] != 640e9 || one["status"] != "serving" || one["role"] != "inference" ||
		one["collector_stale"] != false || one["cluster"].(map[string]any)["role"] != "head" ||
		model["model"] != "qwen3-coder" || model["vram_bytes"] != 61e9 || one["services"].([]any)[0] != "jupyter" {
		t.Fatalf("gpu-01: %v", one)
	}
	if two := nodes["gpu-02"]; two["collector_stale"] != true || two["load1"] != 0.25 || two["gpu_count"] != nil || two["site"] != "ams1" {
		t.Fatalf("gpu-02: %v", two)
	}
	assertLiveNull(t, nodes["gpu-01-vm1"]) // monitoring knows nothing of it
	if vm := nodes["gpu-01-vm1"]; vm["is_virtual"] != true || vm["parent_host"] != "gpu-01" || vm["vmid"] != 101.0 {
		t.Fatalf("vm roster: %v", vm)
	}
	one = e.Do("GET", "/api/v1/ai/nodes/gpu-01", tok, nil).JSON(t)
	if one["status"] != "serving" || fake.Calls() != 2 {
		t.Fatalf("get: %v after %d queries", one, fake.Calls())
	}
	for _, p := range []string{"?limit=1", "?limit=1&site=fra1"} {
		before := fake.Calls()
		if r := e.Do("GET", "/api/v1/ai/nodes"+p, tok, nil); r.Status != 200 || fake.Calls() != before+1 {
			t.Fatalf("%s: %d queries for one request", p, fake.Calls()-before)
		}
	}
}

func TestAINodes_MonitoringDown_200WithNullLiveFieldsAndReachableFalse(t *testing.T) {
	fake := prometheustest.New(t)
	fake.Set(prometheustest.Field("gpu-01:9100", "online", 1))
	e, tok := nodeEnv(t, apitest.Options{Monitor: prometheus.New(prometheus.Config{URL: fake.URL})})
	for name, breakIt := range map[string]func(){"500": func() { fake.Fail(http.StatusInternalServerError) }, "closed": fake.Close} {
		breakIt()
		r := e.Do("GET", "/api/v1/ai/nodes", tok, nil)
		page := r.JSON(t)
		if r.Status != 200 || page["monitoring_reachable"] != false || len(page["items"].([]any)) != 3 {
			t.Fatalf("%s: %d %v", name, r.Status, page)
		}
		for _, n := range nodeItems(t, page) {
			assertLiveNull(t, n)
		}
		one := e.Do("GET", "/api/v1/ai/nodes/gpu-01", tok, nil)
		if one.Status != 200 || one.JSON(t)["gpu_class"] != "H100" {
			t.Fatalf("%s get: %d %s", name, one.Status, one.Body)
		}
		assertLiveNull(t, one.JSON(t))
	}
}

func TestAINodes_MonitoringSlow_200WithNullsWithinTheTimeout(t *testing.T) {
	fake := prometheustest.New(t)
	fake.SetDelay(5 * time.Second)
	e, tok := nodeEnv(t, apitest.Options{Monitor: prometheus.New(prometheus.Config{URL: fake.URL, Timeout: 300 * time.Millisecond})})
	start := time.Now()
	page := e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t)
	if page["monitoring_reachable"] != false || time.Since(start) > 2*time.Second {
		t.Fatalf("prometheus slow: %v after %v", page["monitoring_reachable"], time.Since(start))
	}
	// A monitor without its own bound is cut off by the API after resources.MonitoringTimeout.
	sim, simTok := nodeEnv(t, apitest.Options{})
	sim.Monitor.SetDelay(time.Minute)
	start = time.Now()
	r := sim.Do("GET", "/api/v1/ai/nodes/gpu-02", simTok, nil)
	if r.Status != 200 || time.Since(start) > resources.MonitoringTimeout+time.Second {
		t.Fatalf("simulated slow: %d after %v", r.Status, time.Since(start))
	}
	assertLiveNull(t, r.JSON(t))
}

func TestAINodes_CollectorSilentOver30s_CollectorStale(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	e.Monitor.Set("gpu-01", resources.NodeLive{Online: ptrTo(true), Status: ptrTo(resources.NodeIdle)})
	e.Monitor.Set("gpu-02", resources.NodeLive{Online: ptrTo(true)})
	e.Monitor.SilenceCollector("gpu-02", 31*time.Second)
	nodes := nodeItems(t, e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t))
	if nodes["gpu-01"]["collector_stale"] != false || nodes["gpu-02"]["collector_stale"] != true ||
		nodes["gpu-02"]["monitoring_reachable"] != true || nodes["gpu-01"]["models"] != nil {
		t.Fatalf("%v", nodes)
	}
}

func TestAINodes_Filters_SiteGPUClassAndLiveStatus_HostnameOrder(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	e.Monitor.Set("gpu-01", resources.NodeLive{Status: ptrTo(resources.NodeServing)})
	e.Monitor.Set("gpu-01-vm1", resources.NodeLive{Status: ptrTo(resources.NodeServing)})
	e.Monitor.Set("gpu-02", resources.NodeLive{Status: ptrTo(resources.NodeIdle)})
	hosts := func(query string) []any {
		var out []any
		for _, it := range e.Do("GET", "/api/v1/ai/nodes"+query, tok, nil).JSON(t)["items"].([]any) {
			out = append(out, it.(map[string]any)["hostname"])
		}
		return out
	}
	cases := map[string][]any{"": {"gpu-01", "gpu-01-vm1", "gpu-02"}, "?site=fra1": {"gpu-01", "gpu-01-vm1"},
		"?gpu_class=L40S": {"gpu-02"}, "?status=serving": {"gpu-01", "gpu-01-vm1"}, "?status=serving&site=ams1": nil,
		"?status=powered_off": nil}
	for q, want := range cases {
		if got := hosts(q); len(got) != len(want) || (len(want) > 0 && got[len(got)-1] != want[len(want)-1]) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	first := e.Do("GET", "/api/v1/ai/nodes?status=serving&limit=1", tok, nil).JSON(t)
	next := e.Do("GET", "/api/v1/ai/nodes?status=serving&limit=1&cursor="+first["next_cursor"].(string), tok, nil).JSON(t)
	if next["items"].([]any)[0].(map[string]any)["hostname"] != "gpu-01-vm1" || next["next_cursor"] != nil {
		t.Fatalf("second page: %v", next)
	}
	assertProblem(t, e.Do("GET", "/api/v1/ai/nodes?site=ams1&cursor="+first["next_cursor"].(string), tok, nil), 400, "invalid_cursor")
	e.Monitor.SetUnreachable(true)
	if page := e.Do("GET", "/api/v1/ai/nodes?status=serving", tok, nil).JSON(t); len(page["items"].([]any)) != 0 {
		t.Fatalf("status filter without monitoring: %v", page)
	}
}

func TestAINodes_Get_UnknownHostname404AndPermissions(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	assertProblem(t, e.Do("GET", "/api/v1/ai/nodes/gpu-99", tok, nil), 404, "ai_node_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/ai/nodes/GPU_01", tok, nil), 404, "ai_node_not_found")
	other := e.Token(resources.PermAuditRead)
	assertProblem(t, e.Do("GET", "/api/v1/ai/nodes", other, nil), 403, "forbidden")
	reader := e.Token(resources.PermAIRead)
	if r := e.Do("GET", "/api/v1/ai/nodes/gpu-01", reader, nil); r.Status != 200 {
		t.Fatalf("reader: %d %s", r.Status, r.Body)
	}
}

func ptrTo[T any](v T) *T { return &v }

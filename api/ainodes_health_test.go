package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// healthRoster has a node for every health the simulated monitoring and a
// dead node agent can produce (see healthEnv).
const healthRoster = `nodes:
  - {hostname: gpu-agent-down, gpu_class: L40S, site: fra1}
  - {hostname: gpu-degraded, gpu_class: L40S, site: ams1, specs_summary: "1x EPYC, 4x L40S 48GB"}
  - {hostname: gpu-down, gpu_class: L40S, site: ams1}
  - {hostname: gpu-ok, gpu_class: H100, site: fra1, specs_summary: "2x EPYC 9454, 8x H100 80GB"}
  - {hostname: gpu-ok-vm1, is_virtual: true, parent_host: gpu-ok, vmid: 101, gpu_class: H100, site: fra1,
     specs_summary: "16 vCPU, 1x H100 80GB (passthrough)"}
  - {hostname: gpu-stale, gpu_class: H100, site: fra1}
  - {hostname: gpu-unknown, gpu_class: A100, site: ams1}
`

// healthEnv imports healthRoster and makes monitoring and the agents say:
// gpu-ok 7 of its 8 H100 (one passed through to gpu-ok-vm1, which reports
// it); gpu-degraded 3 of 4 GPUs and a 95% full disk; gpu-down down;
// gpu-stale a collector silent for 31 s; gpu-unknown nothing at all;
// gpu-agent-down up, with an enrolled agent that does not answer.
func healthEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	importNodes(t, e, healthRoster)
	tok := e.Token(resources.PermAIRead)
	up := func(gpus int, total, used *float64) resources.NodeLive {
		return resources.NodeLive{Online: ptrTo(true), Status: ptrTo(resources.NodeServing), GPUCount: &gpus,
			VRAMTotalBytes: total, VRAMUsedBytes: used, DiskUsedPct: ptrTo(40.0)}
	}
	e.Monitor.Set("gpu-ok", up(7, ptrTo(560e9), ptrTo(61e9)))
	e.Monitor.Set("gpu-ok-vm1", up(1, ptrTo(80e9), nil))
	degraded := up(3, ptrTo(144e9), ptrTo(0.0))
	degraded.DiskUsedPct = ptrTo(95.0)
	e.Monitor.Set("gpu-degraded", degraded)
	e.Monitor.Set("gpu-down", resources.NodeLive{Online: ptrTo(false), Status: ptrTo(resources.NodeStandby)})
	e.Monitor.Set("gpu-stale", up(8, ptrTo(640e9), ptrTo(0.0)))
	e.Monitor.SilenceCollector("gpu-stale", 31*time.Second)
	e.Monitor.Set("gpu-agent-down", up(2, ptrTo(96e9), ptrTo(10e9)))
	e.StartAgent("gpu-agent-down", nodeagent.Config{}).HTTP.Close()
	return e, tok
}

type nodeHealth struct {
	Health string
	Reason any
}

// healthOf reads health and health_reason of every node of a page.
func healthOf(t *testing.T, page map[string]any) map[string]nodeHealth {
	t.Helper()
	out := map[string]nodeHealth{}
	for h, n := range nodeItems(t, page) {
		out[h] = nodeHealth{n["health"].(string), n["health_reason"]}
	}
	return out
}

// wantHealth is the health of every node of healthEnv.
var wantHealth = map[string]nodeHealth{
	"gpu-agent-down": {"unreachable", "its node agent does not answer"},
	"gpu-degraded":   {"degraded", "3 of 4 expected GPUs report; root disk 95% full"},
	"gpu-down":       {"offline", "monitoring reports the node down (status standby)"},
	"gpu-ok":         {"ok", nil},
	"gpu-ok-vm1":     {"ok", nil},
	"gpu-stale":      {"stale", "its metrics collector has been silent over 30 s; live values may be old"},
	"gpu-unknown":    {"unreachable", "monitoring has no data for this node"},
}

func TestAINodes_Health_EachStateWithItsReason_InTheListAndTheRecord(t *testing.T) {
	e, tok := healthEnv(t)
	page := e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t)
	if diff := cmp.Diff(wantHealth, healthOf(t, page)); diff != "" {
		t.Fatalf("list (-want +got):\n%s", diff)
	}
	for host, want := range wantHealth {
		n := e.Do("GET", "/api/v1/ai/nodes/"+host, tok, nil).JSON(t)
		if diff := cmp.Diff(want, nodeHealth{n["health"].(string), n["health_reason"]}); diff != "" {
			t.Errorf("get %s (-want +got):\n%s", host, diff)
		}
	}
}

func TestAINodes_Health_MonitoringDown_EveryNodeUnreachable(t *testing.T) {
	e, tok := healthEnv(t)
	e.Monitor.SetUnreachable(true)
	want := map[string]nodeHealth{}
	for h := range wantHealth {
		want[h] = nodeHealth{"unreachable", "monitoring could not be read"}
	}
	page := e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t)
	if diff := cmp.Diff(want, healthOf(t, page)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	one := e.Do("GET", "/api/v1/ai/nodes/gpu-ok", tok, nil).JSON(t)
	if one["health"] != "unreachable" || one["health_reason"] != "monitoring could not be read" {
		t.Fatalf("get: %v", one)
	}
}

// hostsOf follows a list of AI nodes from query to its end and returns the
// hostnames of every page and each page's gpu_classes.
func hostsOf(t *testing.T, e *apitest.Env, tok, query string) ([]string, []any) {
	t.Helper()
	var hosts []string
	var totals []any
	q, _ := url.ParseQuery(query)
	for {
		page := e.Do("GET", "/api/v1/ai/nodes?"+q.Encode(), tok, nil).JSON(t)
		for _, it := range page["items"].([]any) {
			hosts = append(hosts, it.(map[string]any)["hostname"].(string))
		}
		totals = append(totals, page["gpu_classes"])
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return hosts, totals
		}
		q.Set("cursor", next)
	}
}

func TestAINodes_HealthFilter_KeepsThatHealthAcrossPagesAndCombinesWithOthers(t *testing.T) {
	e, tok := healthEnv(t)
	for query, want := range map[string][]string{
		"health=unreachable&limit=1":    {"gpu-agent-down", "gpu-unknown"},
		"health=unreachable&site=ams1":  {"gpu-unknown"},
		"health=ok":                     {"gpu-ok", "gpu-ok-vm1"},
		"health=offline&gpu_class=L40S": {"gpu-down"},
		"health=stale&status=serving":   {"gpu-stale"},
		"health=degraded&site=fra1":     nil,
	} {
		t.Run(query, func(t *testing.T) {
			got, _ := hostsOf(t, e, tok, query)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	first := e.Do("GET", "/api/v1/ai/nodes?health=unreachable&limit=1", tok, nil).JSON(t)
	assertProblem(t, e.Do("GET", "/api/v1/ai/nodes?health=ok&limit=1&cursor="+first["next_cursor"].(string), tok, nil),
		400, "invalid_cursor")
}

func TestAINodes_VRAMFreeBytes_TotalLessUsed_NullWhenEitherIsUnknown(t *testing.T) {
	e, tok := healthEnv(t)
	got := map[string]any{}
	for h, n := range nodeItems(t, e.Do("GET", "/api/v1/ai/nodes", tok, nil).JSON(t)) {
		got[h] = n["vram_free_bytes"]
	}
	want := map[string]any{"gpu-agent-down": 86e9, "gpu-degraded": 144e9, "gpu-down": nil, "gpu-ok": 499e9,
		"gpu-ok-vm1": nil, "gpu-stale": 640e9, "gpu-unknown": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// class is one gpu_classes entry as JSON decodes it.
func class(name any, nodes, gpus any, gpusUnknown float64, total, used, free any, vramUnknown float64) map[string]any {
	return map[string]any{"gpu_class": name, "nodes": nodes, "gpus": gpus, "gpus_unknown_nodes": gpusUnknown,
		"vram_total_bytes": total, "vram_used_bytes": used, "vram_free_bytes": free, "vram_unknown_nodes": vramUnknown}
}

func TestAINodes_GPUClassTotals_WholeFilteredFleetOnEveryPage_UnknownsCountedApart(t *testing.T) {
	e, tok := healthEnv(t)
	all := []any{
		class("A100", 1.0, nil, 1, nil, nil, nil, 1),
		// gpu-ok 7 + gpu-ok-vm1 1 (VRAM used unknown) + gpu-stale 8
		class("H100", 3.0, 16.0, 0, 1200e9, 61e9, 1139e9, 1),
		// gpu-agent-down 2 + gpu-degraded 3; gpu-down reports nothing
		class("L40S", 3.0, 5.0, 1, 240e9, 10e9, 230e9, 1),
	}
	for _, c := range []struct {
		query string
		want  []any
	}{
		{"limit=2", all},
		{"gpu_class=H100&limit=1", all[1:2]},
		{"health=degraded", []any{class("L40S", 1.0, 3.0, 0, 144e9, 0.0, 144e9, 0)}},
		{"site=ams1&limit=1", []any{all[0], class("L40S", 2.0, 3.0, 1, 144e9, 0.0, 144e9, 1)}},
		{"site=nowhere", []any{}},
	} {
		t.Run(c.query, func(t *testing.T) {
			_, pages := hostsOf(t, e, tok, c.query)
			for i, got := range pages {
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Fatalf("page %d of %d (-want +got):\n%s", i+1, len(pages), diff)
				}
			}
		})
	}
	e.Monitor.SetUnreachable(true)
	_, pages := hostsOf(t, e, tok, "")
	want := []any{class("A100", 1.0, nil, 1, nil, nil, nil, 1), class("H100", 3.0, nil, 3, nil, nil, nil, 3),
		class("L40S", 3.0, nil, 3, nil, nil, nil, 3)}
	if diff := cmp.Diff(want, pages[0]); diff != "" {
		t.Fatalf("monitoring down (-want +got):\n%s", diff)
	}
}

func TestAINodes_NewFilters_UnknownOrEmptyValue_400InvalidParameterNamingIt(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	for _, c := range []struct{ path, field, says string }{
		{"/api/v1/ai/nodes?health=sick", "health", "ok, degraded, offline, unreachable, stale"},
		{"/api/v1/ai/nodes?health=", "health", "must not be empty"},
		{"/api/v1/ai/nodes?health=ok&health=stale", "health", "given 2 times"},
		{"/api/v1/ai/nodes?health=OK", "health", "ok, degraded"},
		{"/api/v1/ai/models?cached=some", "cached", "ready, none"},
		{"/api/v1/ai/models?cached=", "cached", "must not be empty"},
		{"/api/v1/node-caches?status=gone", "status", "copying, ready, removing, missing"},
		{"/api/v1/node-caches?status=", "status", "must not be empty"},
	} {
		t.Run(c.path, func(t *testing.T) {
			r := e.Do("GET", c.path, tok, nil)
			p := assertProblem(t, r, 400, "invalid_parameter")
			if f, _ := p["field"].(string); f != c.field || !strings.Contains(string(r.Body), c.says) {
				t.Fatalf("field %q, body %s", f, r.Body)
			}
		})
	}
}

// The enums the contract announces are the domain's lists, so a status or
// health added in resources cannot be refused as an unknown value.
func TestAINodes_Contract_EnumsAreTheDomainLists(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string
				Schema struct{ Items struct{ Enum []string } } // a multi-value filter
			}
		}
		Components struct{ Schemas map[string]json.RawMessage }
	}
	var node struct {
		Properties map[string]struct{ Enum []string }
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc.Components.Schemas["AINode"], &node); err != nil {
		t.Fatal(err)
	}
	enum := func(path, name string) []string {
		for _, p := range doc.Paths[path]["get"].Parameters {
			if p.Name == name {
				return p.Schema.Items.Enum
			}
		}
		return nil
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"health filter", enum("/ai/nodes", "health"), resources.NodeHealthStates},
		{"health member", node.Properties["health"].Enum, resources.NodeHealthStates},
		{"node cache status filter", enum("/node-caches", "status"), resources.NodeCacheStatuses},
		{"cached filter", enum("/ai/models", "cached"), []string{resources.CachedReady, resources.CachedNone}},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-domain +contract):\n%s", c.what, diff)
		}
	}
}

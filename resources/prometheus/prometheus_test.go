package prometheus_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
	"platformapi/resources/prometheus"
	"platformapi/resources/prometheus/prometheustest"
)

// fleet is what Prometheus answers for a serving GPU host, an idle host
// whose collector went silent, and a host whose node exporter is down.
func fleet() []prometheustest.Sample {
	f := prometheustest.Field
	return []prometheustest.Sample{
		f("gpu-01:9100", "online", 1), f("gpu-01:9100", "cpu_util_pct", 37.25), f("gpu-01:9100", "mem_used_pct", 101.3),
		f("gpu-01:9100", "disk_used_pct", 58), f("gpu-01:9100", "load1", 3.5), f("gpu-01:9100", "uptime_seconds", 86400),
		f("gpu-01:9400", "gpu_count", 8), f("gpu-01:9400", "gpu_util_avg_pct", 71.5), f("gpu-01:9400", "gpu_temp_max_c", 66),
		f("gpu-01:9400", "vram_used_bytes", 61e9), f("gpu-01:9400", "vram_total_bytes", 640e9),
		f("gpu-01:9400", "throttle_active", 0), f("gpu-01:9100", "collector_age_seconds", 4.2),
		f("gpu-01:9100", "info", 1, "role", "inference", "status", "serving", "cluster", "fra1", "cluster_role", "head"),
		f("gpu-01:9100", "model", 61e9, "model", "qwen3-coder", "repo", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "state", "serving"),
		f("GPU-02:9100", "online", 1), f("GPU-02:9100", "collector_age_seconds", 45),
		f("GPU-02:9100", "info", 1, "role", "inference", "status", "idle"),
		f("gpu-03:9100", "online", 0),
		{Metric: map[string]string{"instance": "gpu-01:9100", prometheus.FieldLabel: "load1"}, Value: "NaN"},
	}
}

func TestNodeSnapshot_OneQueryMapsNodeExporterDCGMAndCollectorValues(t *testing.T) {
	fake := prometheustest.New(t)
	fake.Set(fleet()...)
	snap, err := prometheus.New(prometheus.Config{URL: fake.URL + "/"}).NodeSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fake.Calls() != 1 || len(snap) != 3 {
		t.Fatalf("calls %d, nodes %v", fake.Calls(), snap)
	}
	one := snap["gpu-01"]
	if *one.Online != true || *one.CPUUtilPct != 37.25 || *one.MemUsedPct != 100 || *one.DiskUsedPct != 58 ||
		*one.Load1 != 3.5 || *one.UptimeSeconds != 86400 || *one.GPUCount != 8 || *one.GPUUtilAvgPct != 71.5 ||
		*one.GPUTempMaxC != 66 || *one.VRAMUsedBytes != 61e9 || *one.VRAMTotalBytes != 640e9 || *one.ThrottleActive ||
		*one.CollectorStale || *one.Role != "inference" || *one.Status != "serving" {
		t.Fatalf("gpu-01: %+v", one)
	}
	if one.Cluster.Name != "fra1" || *one.Cluster.Role != "head" || len(one.Models) != 1 ||
		one.Models[0].Model != "qwen3-coder" || *one.Models[0].VRAMBytes != 61e9 || *one.Models[0].State != "serving" {
		t.Fatalf("gpu-01 cluster/models: %+v %+v", one.Cluster, one.Models)
	}
	two := snap["gpu-02"]
	if !*two.CollectorStale || two.Models == nil || len(two.Models) != 0 || two.GPUCount != nil || two.Cluster != nil {
		t.Fatalf("gpu-02 (stale collector, no GPU metrics): %+v", two)
	}
	three := snap["gpu-03"]
	if *three.Online || *three.Status != resources.NodeOffline || three.Models != nil || three.CollectorStale != nil {
		t.Fatalf("gpu-03 (exporter down): %+v", three)
	}
}

func TestNodeSnapshot_SendsTheDocumentedQueryWithATimeout(t *testing.T) {
	fake := prometheustest.New(t)
	c := prometheus.New(prometheus.Config{URL: fake.URL, Timeout: 1500 * time.Millisecond, NodeJob: "node-exporter"})
	if _, err := c.NodeSnapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	q, form := fake.LastQuery()
	if q != prometheus.BuildQuery("node-exporter") || form["timeout"][0] != "1.5" {
		t.Fatalf("query %q form %v", q, form)
	}
	for _, metric := range []string{`up{job="node-exporter"}`, "node_cpu_seconds_total", "node_memory_MemAvailable_bytes",
		"node_filesystem_avail_bytes", "node_load1", "node_boot_time_seconds", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP",
		"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "node_textfile_mtime_seconds",
		"ai_node_info", "ai_node_model_vram_bytes"} {
		if !strings.Contains(q, metric) {
			t.Errorf("query lacks %s", metric)
		}
	}
	if n := strings.Count(q, "\nor "); n != 14 {
		t.Errorf("query joins %d expressions, want 15", n+1)
	}
}

func TestNodeSnapshot_DownSlowAndErrorAnswersAreUnreachable(t *testing.T) {
	closed := prometheustest.New(t)
	closed.Close()
	status := prometheustest.New(t)
	status.Fail(http.StatusInternalServerError)
	slow := prometheustest.New(t)
	slow.SetDelay(2 * time.Second)
	cases := map[string]string{"closed": closed.URL, "500": status.URL, "slow": slow.URL, "bad url": "::"}
	for name, url := range cases {
		start := time.Now()
		_, err := prometheus.New(prometheus.Config{URL: url, Timeout: 200 * time.Millisecond}).NodeSnapshot(context.Background())
		if !errors.Is(err, resources.ErrMonitoringUnreachable) || time.Since(start) > time.Second {
			t.Errorf("%s: %v after %v", name, err, time.Since(start))
		}
	}
}

func TestNodeSnapshot_CredentialsInTheURLNeverInErrors(t *testing.T) {
	fake := prometheustest.New(t)
	fake.Fail(http.StatusServiceUnavailable)
	url := strings.Replace(fake.URL, "http://", "http://ops:s3cret@", 1)
	_, err := prometheus.New(prometheus.Config{URL: url}).NodeSnapshot(context.Background())
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("%v", err)
	}
}

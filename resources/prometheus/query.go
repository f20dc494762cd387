package prometheus

import (
	"fmt"
	"strings"
)

// FieldLabel is the label the adapter's query adds to every series to say
// which live field it carries.
const FieldLabel = "platformapi_field"

// CollectorFile is the node-exporter textfile the platform's node collector
// writes (ai_node_info, ai_node_model_vram_bytes); its modification time
// tells how long the collector has been silent.
const CollectorFile = "ai_node.prom"

// field is one live value: the PromQL that yields it per instance.
type field struct {
	name string
	expr string
}

// fields are the live values read from node exporter (node_*), the DCGM GPU
// exporter (DCGM_FI_*) and the platform's node collector (ai_node_*). Each
// expression yields at most one series per instance (extra labels only for
// info and model).
func fields(nodeJob string) []field {
	root := `{mountpoint="/",fstype!="rootfs"}`
	return []field{
		{"online", fmt.Sprintf(`max by (instance) (up{job=%q})`, nodeJob)},
		{"cpu_util_pct", `100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])))`},
		{"mem_used_pct", `100 * (1 - max by (instance) (node_memory_MemAvailable_bytes) / max by (instance) (node_memory_MemTotal_bytes))`},
		{"disk_used_pct", `100 * (1 - max by (instance) (node_filesystem_avail_bytes` + root + `) / max by (instance) (node_filesystem_size_bytes` + root + `))`},
		{"load1", `max by (instance) (node_load1)`},
		{"uptime_seconds", `max by (instance) (node_time_seconds - node_boot_time_seconds)`},
		{"gpu_count", `count by (instance) (DCGM_FI_DEV_GPU_UTIL)`},
		{"gpu_util_avg_pct", `avg by (instance) (DCGM_FI_DEV_GPU_UTIL)`},
		{"gpu_temp_max_c", `max by (instance) (DCGM_FI_DEV_GPU_TEMP)`},
		{"vram_used_bytes", `1048576 * sum by (instance) (DCGM_FI_DEV_FB_USED)`},
		{"vram_total_bytes", `1048576 * sum by (instance) (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)`},
		{"throttle_active", `max by (instance) (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS > bool 3)`},
		{"collector_age_seconds", fmt.Sprintf(`time() - max by (instance) (node_textfile_mtime_seconds{file=%q})`, CollectorFile)},
		{"info", `max by (instance, role, status, cluster, cluster_role) (ai_node_info)`},
		{"model", `max by (instance, model, repo, state) (ai_node_model_vram_bytes)`},
	}
}

// BuildQuery is the one instant query a snapshot sends: every field's
// expression, tagged with FieldLabel, joined with `or` (the tags keep the
// series apart, so `or` drops none).
func BuildQuery(nodeJob string) string {
	parts := make([]string, 0, 16)
	for _, f := range fields(nodeJob) {
		parts = append(parts, fmt.Sprintf(`label_replace(%s, %q, %q, "", "")`, f.expr, FieldLabel, f.name))
	}
	return strings.Join(parts, "\nor ")
}

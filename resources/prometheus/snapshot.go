package prometheus

import (
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"platformapi/resources"
)

// numbers are the fields that are plain numbers, by where they go; the
// percentages among them are clamped to 0..100.
var numbers = map[string]func(*resources.NodeLive) **float64{
	"cpu_util_pct":     func(l *resources.NodeLive) **float64 { return &l.CPUUtilPct },
	"mem_used_pct":     func(l *resources.NodeLive) **float64 { return &l.MemUsedPct },
	"disk_used_pct":    func(l *resources.NodeLive) **float64 { return &l.DiskUsedPct },
	"gpu_util_avg_pct": func(l *resources.NodeLive) **float64 { return &l.GPUUtilAvgPct },
	"load1":            func(l *resources.NodeLive) **float64 { return &l.Load1 },
	"uptime_seconds":   func(l *resources.NodeLive) **float64 { return &l.UptimeSeconds },
	"gpu_temp_max_c":   func(l *resources.NodeLive) **float64 { return &l.GPUTempMaxC },
	"vram_used_bytes":  func(l *resources.NodeLive) **float64 { return &l.VRAMUsedBytes },
	"vram_total_bytes": func(l *resources.NodeLive) **float64 { return &l.VRAMTotalBytes },
}

// node is one node's values while the vector is read.
type node struct {
	live      resources.NodeLive
	collector bool // the node collector reported (models known, even if none)
}

// snapshot turns the query's vector into live values by hostname.
func snapshot(result []sample) resources.NodeSnapshot {
	nodes := map[string]*node{}
	for _, s := range result {
		host := hostOf(s.Metric["instance"])
		v, ok := value(s.Value)
		if host == "" || !ok {
			continue
		}
		n := nodes[host]
		if n == nil {
			n = &node{}
			nodes[host] = n
		}
		n.set(s.Metric[FieldLabel], v, s.Metric)
	}
	out := resources.NodeSnapshot{}
	for host, n := range nodes {
		out[host] = n.finish()
	}
	return out
}

// set records one sample of field.
func (n *node) set(field string, v float64, m map[string]string) {
	l := &n.live
	if at, ok := numbers[field]; ok {
		if strings.HasSuffix(field, "_pct") {
			v = math.Min(math.Max(v, 0), 100)
		}
		*at(l) = &v
		return
	}
	switch field {
	case "online":
		l.Online = ptr(v >= 1)
	case "gpu_count":
		l.GPUCount = ptr(int(v))
	case "throttle_active":
		l.ThrottleActive = ptr(v >= 1)
	case "collector_age_seconds":
		n.collector = true
		l.CollectorStale = ptr(resources.CollectorStale(time.Duration(v * float64(time.Second))))
	case "info":
		n.collector = true
		l.Role, l.Status = label(m, "role"), label(m, "status")
		if name := label(m, "cluster"); name != nil {
			l.Cluster = &resources.NodeCluster{Name: *name, Role: label(m, "cluster_role")}
		}
	case "model":
		n.collector = true
		if name := label(m, "model"); name != nil {
			l.Models = append(l.Models, resources.NodeModel{Model: *name, Repo: label(m, "repo"),
				State: label(m, "state"), VRAMBytes: &v})
		}
	}
}

// finish settles what follows from the whole vector: a node whose exporter
// is down is offline; a reporting collector with no model means none loaded.
func (n *node) finish() resources.NodeLive {
	l := n.live
	if l.Status == nil && l.Online != nil && !*l.Online {
		l.Status = ptr(resources.NodeOffline)
	}
	if n.collector && l.Models == nil {
		l.Models = []resources.NodeModel{}
	}
	slices.SortFunc(l.Models, func(a, b resources.NodeModel) int { return strings.Compare(a.Model, b.Model) })
	return l
}

// hostOf is the hostname in an instance label ("host:port" or "host"),
// lower-cased.
func hostOf(instance string) string {
	if h, _, err := net.SplitHostPort(instance); err == nil {
		instance = h
	}
	return strings.ToLower(strings.TrimSuffix(instance, "."))
}

// value reads a sample's "value" string; NaN and infinities are no value.
func value(pair [2]any) (float64, bool) {
	s, ok := pair[1].(string)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// label is a label's value, nil when absent or empty.
func label(m map[string]string, name string) *string {
	if v := m[name]; v != "" {
		return &v
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

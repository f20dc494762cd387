package resources

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Health of an AI node (NodeHealth.State), derived by AssessNode from the
// roster and the live readings; never stored.
const (
	HealthOK          = "ok"          // up, fresh readings, no warning sign
	HealthDegraded    = "degraded"    // up, but a warning sign (NodeHealth.Reason lists them)
	HealthOffline     = "offline"     // down, or its status says offline or powered off
	HealthUnreachable = "unreachable" // monitoring has nothing for it, or its agent is silent
	HealthStale       = "stale"       // its collector has been silent over CollectorStaleAfter
)

// NodeHealthStates lists every health AssessNode can derive; the node
// list's health filter takes exactly these.
var NodeHealthStates = []string{HealthOK, HealthDegraded, HealthOffline, HealthUnreachable,
	HealthStale}

// Thresholds of the degraded signals. Each is the point past which the node
// still works but an operator should act (docs/decisions.md, "AI node
// health").
const (
	// DiskNearlyFullPct: the root file system at or above 90% used is the
	// kubelet's default hard eviction (nodefs.available < 10%): a node
	// running containers starts evicting them there.
	DiskNearlyFullPct = 90.0
	// MemoryNearlyFullPct: host memory at or above 95% used leaves the
	// kernel no page cache to reclaim; model servers stage weights through
	// host memory and the OOM killer is next.
	MemoryNearlyFullPct = 95.0
	// GPUHotC: a GPU at or above 85 °C is within a few degrees of the
	// slowdown temperature data-center GPUs report (nvidia-smi -q, "GPU
	// Slowdown Temp", high 80s for A100, H100 and L40S): it warns before
	// the clocks drop.
	GPUHotC = 85.0
)

// NodeReadings is what AssessNode judges one node by.
type NodeReadings struct {
	// MonitoringRead: monitoring answered this request's snapshot.
	MonitoringRead bool
	// Live is monitoring's values for the node; nil when it has none.
	Live *NodeLive
	// ExpectedGPUs is how many GPUs the roster says the node should report
	// (ExpectedGPUs); nil when the roster does not say.
	ExpectedGPUs *int
	// AgentSilent: the node has an enrolled node agent that did not answer.
	AgentSilent bool
}

// NodeHealth is a node's derived health: State (one of NodeHealthStates)
// and Reason, a short sentence saying why (nil when State is ok).
type NodeHealth struct {
	State  string
	Reason *string
}

// AssessNode derives a node's health; the first rule that holds decides:
//
//  1. unreachable: monitoring could not be read, or has nothing for the node;
//  2. offline: monitoring reports it down (online false: Prometheus' own
//     scrape, fresh even when the node's collector is silent);
//  3. stale: its collector has been silent over 30 s (collector_stale), so
//     the collector's own values (status, models) may be old;
//  4. offline: its status is offline or powered_off;
//  5. unreachable: its enrolled node agent does not answer;
//  6. degraded: any warning sign (degradedSigns), all of them in Reason;
//  7. ok.
func AssessNode(r NodeReadings) NodeHealth {
	l := r.Live
	switch {
	case !r.MonitoringRead:
		return health(HealthUnreachable, "monitoring could not be read")
	case l == nil:
		return health(HealthUnreachable, "monitoring has no data for this node")
	case l.Online != nil && !*l.Online:
		return health(HealthOffline, "monitoring reports the node down"+statusNote(l.Status))
	case l.CollectorStale != nil && *l.CollectorStale:
		return health(HealthStale,
			"its metrics collector has been silent over 30 s; live values may be old")
	case l.Status != nil && (*l.Status == NodeOffline || *l.Status == NodePoweredOff):
		return health(HealthOffline, "its status is "+*l.Status)
	case r.AgentSilent:
		return health(HealthUnreachable, "its node agent does not answer")
	}
	if signs := degradedSigns(*l, r.ExpectedGPUs); len(signs) > 0 {
		return health(HealthDegraded, strings.Join(signs, "; "))
	}
	return NodeHealth{State: HealthOK}
}

// degradedSigns lists the warning signs of a node that is up: GPUs missing
// against the roster, a nearly full root disk or host memory, a hot or
// throttling GPU.
func degradedSigns(l NodeLive, expected *int) []string {
	var out []string
	if expected != nil && *expected > 0 {
		switch {
		case l.GPUCount == nil:
			out = append(out, fmt.Sprintf("no GPU reports (%d expected)", *expected))
		case *l.GPUCount < *expected:
			out = append(out, fmt.Sprintf("%d of %d expected GPUs report", *l.GPUCount, *expected))
		}
	}
	if l.DiskUsedPct != nil && *l.DiskUsedPct >= DiskNearlyFullPct {
		out = append(out, "root disk "+pct(*l.DiskUsedPct)+" full")
	}
	if l.MemUsedPct != nil && *l.MemUsedPct >= MemoryNearlyFullPct {
		out = append(out, "host memory "+pct(*l.MemUsedPct)+" used")
	}
	if l.GPUTempMaxC != nil && *l.GPUTempMaxC >= GPUHotC {
		out = append(out, "hottest GPU at "+strconv.FormatFloat(*l.GPUTempMaxC, 'f', 0, 64)+" °C")
	}
	if l.ThrottleActive != nil && *l.ThrottleActive {
		out = append(out, "a GPU throttles its clock")
	}
	return out
}

func health(state, reason string) NodeHealth { return NodeHealth{State: state, Reason: &reason} }

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + "%" }

func statusNote(status *string) string {
	if status == nil {
		return ""
	}
	return " (status " + *status + ")"
}

// ExpectedGPUs is how many GPUs node should report by the roster: the count
// its specs_summary gives for its gpu_class ("2x EPYC 9454, 8x H100 80GB"
// with class H100 → 8), less the counts its roster VMs (virtual nodes whose
// parent_host it is) give for theirs, since a GPU passed through to a VM
// reports on the VM. nil when the roster does not say: no gpu_class, no
// such count, or a VM of it without one.
func ExpectedGPUs(node AINode, roster []AINode) *int {
	n, ok := recordedGPUs(node)
	if !ok {
		return nil
	}
	for _, vm := range roster {
		if !vm.IsVirtual || vm.ParentHost == nil || *vm.ParentHost != node.Hostname {
			continue
		}
		passed, ok := recordedGPUs(vm)
		if !ok {
			return nil
		}
		n -= passed
	}
	n = max(n, 0)
	return &n
}

// recordedGPUs sums the "<n>x <gpu_class>" counts of the node's
// specs_summary (case-insensitive; "×" counts as "x").
func recordedGPUs(n AINode) (int, bool) {
	if n.GPUClass == nil || n.SpecsSummary == nil || strings.TrimSpace(*n.GPUClass) == "" {
		return 0, false
	}
	re := regexp.MustCompile(`(?i)(?:^|[^0-9])([0-9]{1,4})\s*[x×]\s*(?:nvidia\s+)?` +
		regexp.QuoteMeta(strings.TrimSpace(*n.GPUClass)) + `(?:[^a-z0-9]|$)`)
	total, found := 0, false
	for _, m := range re.FindAllStringSubmatch(*n.SpecsSummary, -1) {
		c, _ := strconv.Atoi(m[1])
		total, found = total+c, true
	}
	return total, found
}

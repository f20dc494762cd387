package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// up is a node monitoring reports up, fresh, with 4 GPUs and no warning sign.
func up() *NodeLive {
	return &NodeLive{Online: ptr(true), CollectorStale: ptr(false), Status: ptr(NodeServing), GPUCount: ptr(4),
		DiskUsedPct: ptr(58.0), MemUsedPct: ptr(41.0), GPUTempMaxC: ptr(61.0), ThrottleActive: ptr(false)}
}

func with(f func(*NodeLive)) *NodeLive {
	l := up()
	f(l)
	return l
}

func TestAssessNode_EachHealthAndItsReason_FirstRuleThatHoldsDecides(t *testing.T) {
	four := ptr(4)
	for _, c := range []struct {
		name string
		in   NodeReadings
		want NodeHealth
	}{
		{"all well", NodeReadings{MonitoringRead: true, Live: up(), ExpectedGPUs: four}, NodeHealth{State: HealthOK}},
		{"roster says nothing of GPUs", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.GPUCount = nil })},
			NodeHealth{State: HealthOK}},
		{"monitoring unread", NodeReadings{Live: up()}, health(HealthUnreachable, "monitoring could not be read")},
		{"unknown to monitoring", NodeReadings{MonitoringRead: true},
			health(HealthUnreachable, "monitoring has no data for this node")},
		{"down", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.Online, l.Status = ptr(false), nil })},
			health(HealthOffline, "monitoring reports the node down")},
		{"down beats stale", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) {
			l.Online, l.CollectorStale, l.Status = ptr(false), ptr(true), ptr(NodeStandby)
		})}, health(HealthOffline, "monitoring reports the node down (status standby)")},
		{"stale beats an old status", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) {
			l.CollectorStale, l.Status = ptr(true), ptr(NodePoweredOff)
		}), AgentSilent: true}, health(HealthStale, "its metrics collector has been silent over 30 s; live values may be old")},
		{"status offline", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.Status = ptr(NodeOffline) })},
			health(HealthOffline, "its status is offline")},
		{"status powered off, agent silent", NodeReadings{MonitoringRead: true,
			Live: with(func(l *NodeLive) { l.Status = ptr(NodePoweredOff) }), AgentSilent: true},
			health(HealthOffline, "its status is powered_off")},
		{"agent silent beats degraded", NodeReadings{MonitoringRead: true, AgentSilent: true,
			Live: with(func(l *NodeLive) { l.DiskUsedPct = ptr(99.0) })}, health(HealthUnreachable, "its node agent does not answer")},
		{"a GPU missing", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.GPUCount = ptr(3) }), ExpectedGPUs: four},
			health(HealthDegraded, "3 of 4 expected GPUs report")},
		{"no GPU reports", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.GPUCount = nil }), ExpectedGPUs: four},
			health(HealthDegraded, "no GPU reports (4 expected)")},
		{"more GPUs than recorded", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.GPUCount = ptr(5) }),
			ExpectedGPUs: four}, NodeHealth{State: HealthOK}},
		{"every GPU passed through", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) { l.GPUCount = nil }),
			ExpectedGPUs: ptr(0)}, NodeHealth{State: HealthOK}},
		{"thresholds reached, all signs listed", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) {
			l.DiskUsedPct, l.MemUsedPct, l.GPUTempMaxC, l.ThrottleActive = ptr(90.0), ptr(95.0), ptr(85.0), ptr(true)
		})}, health(HealthDegraded, "root disk 90% full; host memory 95% used; hottest GPU at 85 °C; a GPU throttles its clock")},
		{"just under the thresholds", NodeReadings{MonitoringRead: true, Live: with(func(l *NodeLive) {
			l.DiskUsedPct, l.MemUsedPct, l.GPUTempMaxC = ptr(89.9), ptr(94.9), ptr(84.9)
		})}, NodeHealth{State: HealthOK}},
		{"live values unknown", NodeReadings{MonitoringRead: true, Live: &NodeLive{}}, NodeHealth{State: HealthOK}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, AssessNode(c.in)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpectedGPUs_SpecsCountOfTheClassLessWhatItsVMsRecord(t *testing.T) {
	node := func(host, class, specs string, parent *string) AINode {
		n := AINode{Hostname: host, IsVirtual: parent != nil, ParentHost: parent}
		if class != "" {
			n.GPUClass = &class
		}
		if specs != "" {
			n.SpecsSummary = &specs
		}
		return n
	}
	host := node("gpu-01", "H100", "2x EPYC 9454, 8x H100 80GB, 1.5 TB RAM", nil)
	vm := node("gpu-01-vm1", "H100", "16 vCPU, 1x H100 80GB (passthrough)", ptr("gpu-01"))
	other := node("gpu-02", "l40s", "1x EPYC 9354, 4 × L40S 48GB, 4x NVIDIA L40S", nil)
	for _, c := range []struct {
		name   string
		node   AINode
		roster []AINode
		want   *int
	}{
		{"host less its VM", host, []AINode{host, vm, other}, ptr(7)},
		{"host alone", host, []AINode{host}, ptr(8)},
		{"the VM", vm, []AINode{host, vm}, ptr(1)},
		{"case, ×, vendor prefix, counts summed", other, nil, ptr(8)},
		{"no class", node("a", "", "8x H100", nil), nil, nil},
		{"no specs", node("a", "H100", "", nil), nil, nil},
		{"class not in the specs", node("a", "A100", "8x H100 80GB", nil), nil, nil},
		{"class only a prefix there", node("a", "H100", "8x H100NVL", nil), nil, nil},
		{"a VM without a count", host, []AINode{host, node("vm", "H100", "16 vCPU", ptr("gpu-01"))}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, ExpectedGPUs(c.node, c.roster)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSumGPUClasses_UnknownsCountedApartNeverAsZero(t *testing.T) {
	h100, l40s := ptr("H100"), ptr("L40S")
	nodes := []NodeGPUs{
		{GPUClass: l40s, GPUCount: ptr(4), VRAMTotalBytes: ptr(192e9), VRAMUsedBytes: ptr(0.0)},
		{GPUClass: h100, GPUCount: ptr(7), VRAMTotalBytes: ptr(560e9), VRAMUsedBytes: ptr(61e9)},
		{GPUClass: nil, GPUCount: ptr(2)},
		{GPUClass: h100, GPUCount: ptr(1), VRAMTotalBytes: ptr(80e9), VRAMUsedBytes: nil}, // used unknown
		{GPUClass: l40s}, // offline: nothing known
		{GPUClass: h100, GPUCount: ptr(1), VRAMTotalBytes: ptr(80e9), VRAMUsedBytes: ptr(2.3e9)},
	}
	want := []GPUClassTotals{
		{GPUClass: h100, Nodes: 3, GPUs: ptr(9), VRAMTotalBytes: ptr(640e9), VRAMUsedBytes: ptr(63.3e9),
			VRAMFreeBytes: ptr(576.7e9), VRAMUnknownNodes: 1},
		{GPUClass: l40s, Nodes: 2, GPUs: ptr(4), GPUsUnknownNodes: 1, VRAMTotalBytes: ptr(192e9),
			VRAMUsedBytes: ptr(0.0), VRAMFreeBytes: ptr(192e9), VRAMUnknownNodes: 1},
		{Nodes: 1, GPUs: ptr(2), VRAMUnknownNodes: 1},
	}
	if diff := cmp.Diff(want, SumGPUClasses(nodes), approx); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got := SumGPUClasses(nil); len(got) != 0 {
		t.Fatalf("no node: %v", got)
	}
	if got := SumGPUClasses([]NodeGPUs{{GPUClass: h100}})[0]; got.GPUs != nil || got.VRAMTotalBytes != nil {
		t.Fatalf("a class no node reports for must total null, not 0: %+v", got)
	}
}

func TestVRAMFree_TotalLessUsedNullWhenEitherUnknown(t *testing.T) {
	for _, c := range []struct {
		total, used, want *float64
	}{
		{ptr(80e9), ptr(61e9), ptr(19e9)}, {nil, ptr(1.0), nil}, {ptr(1.0), nil, nil}, {ptr(1.0), ptr(2.0), ptr(0.0)},
	} {
		if diff := cmp.Diff(c.want, VRAMFree(c.total, c.used)); diff != "" {
			t.Errorf("VRAMFree(%v, %v) (-want +got):\n%s", c.total, c.used, diff)
		}
	}
}

// approx compares sums of float64 byte counts to a part in 10^12.
var approx = cmp.Comparer(func(a, b float64) bool {
	d := a - b
	return d < 1 && d > -1 || (d < a*1e-12 && d > -a*1e-12)
})

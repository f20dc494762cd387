package monitoringsim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// gpuFigures are a node's GPU values as monitoring reports them.
type gpuFigures struct {
	Count       *int
	Total, Used *float64
}

// figures reads the GPU values of every node the simulation reports.
func figures(t *testing.T, s *Sim) map[string]gpuFigures {
	t.Helper()
	snap, err := s.NodeSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]gpuFigures{}
	for h, l := range snap {
		out[h] = gpuFigures{Count: l.GPUCount, Total: l.VRAMTotalBytes, Used: l.VRAMUsedBytes}
	}
	return out
}

func fig(count int, total, used float64) gpuFigures {
	return gpuFigures{Count: &count, Total: &total, Used: &used}
}

// allOnline is the demo fleet with its standby spare switched on.
func allOnline() Fleet {
	f := DemoFleet()
	spare := f["gpu-fra1-02"]
	f["gpu-fra1-03"] = spare
	return f
}

func TestSetRoster_ClassMemoryFromRosterPassthroughCountedOnceOnTheVM(t *testing.T) {
	unknown := demoRoster()
	unknown[2].GPUClass, unknown[3].GPUClass = ptr("MI300X"), nil
	for _, tc := range []struct {
		name   string
		roster []resources.AINode
		fleet  Fleet
		want   map[string]gpuFigures
	}{
		{"demo world: the host keeps 7 of its 8 H100, the VM has 1; the standby spare reports none",
			demoRoster(), DemoFleet(), map[string]gpuFigures{
				"gpu-fra1-01":     fig(7, 560e9, 61e9),
				"gpu-fra1-01-vm1": fig(1, 80e9, 2.3e9),
				"gpu-fra1-02":     fig(4, 192e9, 0),
				"gpu-fra1-03":     {},
			}},
		{"every machine online: 8 H100 and 8 L40S in all",
			demoRoster(), allOnline(), map[string]gpuFigures{
				"gpu-fra1-01":     fig(7, 560e9, 61e9),
				"gpu-fra1-01-vm1": fig(1, 80e9, 2.3e9),
				"gpu-fra1-02":     fig(4, 192e9, 0),
				"gpu-fra1-03":     fig(4, 192e9, 0),
			}},
		{"a class the platform does not know, or none: GPUs counted, VRAM total null",
			unknown, allOnline(), map[string]gpuFigures{
				"gpu-fra1-01":     fig(7, 560e9, 61e9),
				"gpu-fra1-01-vm1": fig(1, 80e9, 2.3e9),
				"gpu-fra1-02":     {Count: ptr(4), Used: ptr(0.0)},
				"gpu-fra1-03":     {Count: ptr(4), Used: ptr(0.0)},
			}},
		{"a machine the roster does not list is not reported",
			demoRoster()[2:3], DemoFleet(), map[string]gpuFigures{"gpu-fra1-02": fig(4, 192e9, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, figures(t, FromRoster(tc.roster, tc.fleet))); diff != "" {
				t.Fatalf("GPU figures (-want +got)\n%s", diff)
			}
		})
	}
}

func TestSetRoster_FollowsANewRosterAndLeavesSetNodesAlone(t *testing.T) {
	s := Demo()
	if got := s.Hostnames(); len(got) != 0 {
		t.Fatalf("the demo fleet reports %v before it knows the roster", got)
	}
	s.Set("lab-01", resources.NodeLive{Online: ptr(true)})
	s.SetRoster(demoRoster())
	s.SetRoster(demoRoster()[:1]) // the VM left the roster: the host sees all its GPUs
	want := map[string]gpuFigures{"gpu-fra1-01": fig(8, 640e9, 61e9), "lab-01": {}}
	if diff := cmp.Diff(want, figures(t, s)); diff != "" {
		t.Fatalf("GPU figures (-want +got)\n%s", diff)
	}
}

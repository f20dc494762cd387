package app

import (
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore/pgtest"
)

// TestDemoFleet_GPUMemoryOfTheRosterClassPassthroughCountedOnce: the
// simulated monitoring of `serve --demo` reports each node's GPUs with the
// memory of its roster class (H100 80 GB, L40S 48 GB, decimal), and the
// H100 gpu-fra1-01 passes through to its VM counted once, on the VM: 7 on
// the host, 1 on the VM, 8 H100 in all; the standby L40S spare reports
// none. Used VRAM is the loaded models'.
func TestDemoFleet_GPUMemoryOfTheRosterClassPassthroughCountedOnce(t *testing.T) {
	d := startDemo(t, pgtest.DSN(t), time.Time{})
	type figures struct{ GPUs, VRAMTotal, VRAMUsed any }
	got, byClass := map[string]figures{}, map[string]float64{}
	for _, n := range d.all("/ai/nodes", url.Values{}) {
		got[n["hostname"].(string)] = figures{n["gpu_count"], n["vram_total_bytes"], n["vram_used_bytes"]}
		if c, ok := n["gpu_count"].(float64); ok {
			byClass[n["gpu_class"].(string)] += c
		}
	}
	want := map[string]figures{
		"gpu-fra1-01":     {7.0, 560e9, 61e9},
		"gpu-fra1-01-vm1": {1.0, 80e9, 2.3e9},
		"gpu-fra1-02":     {4.0, 192e9, 0.0},
		"gpu-fra1-03":     {nil, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("GPU figures (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"H100": 8, "L40S": 4}, byClass); diff != "" {
		t.Fatalf("GPUs reporting by class (-want +got)\n%s", diff)
	}
}

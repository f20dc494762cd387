package monitoringsim

import (
	"context"
	"errors"
	"testing"
	"time"

	"platformapi/resources"
)

// demoRoster is the demo world's roster (cmd/platformapi/app/demo_inventory.yaml)
// as far as the simulation reads it.
func demoRoster() []resources.AINode {
	return []resources.AINode{
		{Hostname: "gpu-fra1-01", GPUClass: ptr("H100")},
		{Hostname: "gpu-fra1-01-vm1", IsVirtual: true, GPUClass: ptr("H100"),
			ParentHost: ptr("gpu-fra1-01"), VMID: ptr(101)},
		{Hostname: "gpu-fra1-02", GPUClass: ptr("L40S")},
		{Hostname: "gpu-fra1-03", GPUClass: ptr("L40S")},
	}
}

func TestSim_StaleCollectorAfterMoreThan30sOfSilence(t *testing.T) {
	s := FromRoster(demoRoster(), DemoFleet())
	s.SilenceCollector("gpu-fra1-02", 31*time.Second)
	s.SilenceCollector("gpu-fra1-01", 30*time.Second)
	snap, err := s.NodeSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !*snap["gpu-fra1-02"].CollectorStale || *snap["gpu-fra1-01"].CollectorStale || len(snap) != len(s.Hostnames()) {
		t.Fatalf("%+v", snap)
	}
	snap["gpu-fra1-01"].Models[0].Model = "changed by a caller"
	again, _ := s.NodeSnapshot(context.Background())
	if again["gpu-fra1-01"].Models[0].Model == "changed by a caller" || s.Calls() != 2 {
		t.Fatal("a snapshot shares its models with the simulation")
	}
}

func TestSim_UnreachableAndSlowFailAsUnreachable(t *testing.T) {
	s := FromRoster(demoRoster(), DemoFleet())
	s.SetUnreachable(true)
	if _, err := s.NodeSnapshot(context.Background()); !errors.Is(err, resources.ErrMonitoringUnreachable) {
		t.Fatalf("unreachable: %v", err)
	}
	s.SetUnreachable(false)
	s.SetDelay(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.NodeSnapshot(ctx); !errors.Is(err, resources.ErrMonitoringUnreachable) {
		t.Fatalf("slow: %v", err)
	}
	s.SetDelay(0)
	s.Forget("gpu-fra1-03")
	if snap, err := s.NodeSnapshot(context.Background()); err != nil || len(snap) != 3 || s.Calls() != 3 {
		t.Fatalf("healed: %v %v", snap, err)
	}
}

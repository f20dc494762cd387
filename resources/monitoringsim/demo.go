package monitoringsim

import "platformapi/resources"

// DemoFleet is the simulated hardware of the demo world's roster
// (cmd/platformapi/app/demo_inventory.yaml): gpu-fra1-01 with 8 GPUs, one
// of them passed through to its VM gpu-fra1-01-vm1, heads a cluster serving
// a coding model; the VM holds an embedding model; gpu-fra1-02 (4 GPUs)
// idles with its root disk 93.5% full (degraded health); gpu-fra1-03 (4
// GPUs) is a standby spare, offline. The GPU classes come from the roster
// (see Sim.SetRoster).
func DemoFleet() Fleet {
	head := online(resources.NodeServing, "inference", []resources.NodeModel{
		{Model: "qwen3-coder-30b", Repo: ptr("Qwen/Qwen3-Coder-30B-A3B-Instruct"), State: ptr("serving"),
			VRAMBytes: ptr(61.0e9)},
	})
	head.Cluster = &resources.NodeCluster{Name: "fra1-inference", Role: ptr("head")}
	idle := online(resources.NodeIdle, "inference", []resources.NodeModel{})
	idle.DiskUsedPct = ptr(93.5)
	return Fleet{
		"gpu-fra1-01": {GPUs: 8, Live: head},
		"gpu-fra1-01-vm1": {GPUs: 1, Live: online(resources.NodeLoadedIdle, "lab", []resources.NodeModel{
			{Model: "bge-m3", Repo: ptr("BAAI/bge-m3"), State: ptr("idle"), VRAMBytes: ptr(2.3e9)},
		})},
		"gpu-fra1-02": {GPUs: 4, Live: idle},
		"gpu-fra1-03": {GPUs: 4, Live: resources.NodeLive{Online: ptr(false),
			Status: ptr(resources.NodeStandby), Role: ptr("spare"), Models: []resources.NodeModel{}}},
	}
}

// Demo returns a simulation of DemoFleet that knows no roster yet: it
// reports nothing until SetRoster lists the demo roster's nodes.
func Demo() *Sim { return FromRoster(nil, DemoFleet()) }

// online builds plausible live values for an online node; the GPU values
// are the machine's (Machine.report).
func online(status, role string, models []resources.NodeModel) resources.NodeLive {
	util := map[bool]float64{true: 71.5, false: 0.4}[status == resources.NodeServing]
	return resources.NodeLive{Online: ptr(true), Status: ptr(status), Role: ptr(role), Models: models,
		CPUUtilPct: ptr(23.5), MemUsedPct: ptr(41.2), DiskUsedPct: ptr(58.0), Load1: ptr(3.2),
		UptimeSeconds: ptr(1_209_600.0), GPUUtilAvgPct: ptr(util), GPUTempMaxC: ptr(61.0),
		ThrottleActive: ptr(false)}
}

func ptr[T any](v T) *T { return &v }

package monitoringsim

import "platformapi/resources"

// Demo returns a simulation of a small fleet: two GPU hosts (one serving a
// model in a cluster, one idle), a GPU VM on the first host, and a standby
// node. Import an inventory listing these hostnames to see them live.
func Demo() *Sim {
	s := New()
	head := live(resources.NodeServing, "inference", 8, []resources.NodeModel{
		{Model: "qwen3-coder-30b", Repo: ptr("Qwen/Qwen3-Coder-30B-A3B-Instruct"), State: ptr("serving"), VRAMBytes: ptr(61.0e9)},
	})
	head.Cluster = &resources.NodeCluster{Name: "fra1-inference", Role: ptr("head")}
	s.Set("gpu-fra1-01", head)
	s.Set("gpu-fra1-02", live(resources.NodeIdle, "inference", 4, []resources.NodeModel{}))
	s.Set("gpu-fra1-01-vm1", live(resources.NodeLoadedIdle, "lab", 1, []resources.NodeModel{
		{Model: "bge-m3", Repo: ptr("BAAI/bge-m3"), State: ptr("idle"), VRAMBytes: ptr(2.3e9)},
	}))
	s.Set("gpu-fra1-03", resources.NodeLive{Online: ptr(false), Status: ptr(resources.NodeStandby), Role: ptr("spare"),
		Models: []resources.NodeModel{}})
	return s
}

// live builds plausible live values for an online node with gpus GPUs.
func live(status, role string, gpus int, models []resources.NodeModel) resources.NodeLive {
	used := 0.0
	for _, m := range models {
		if m.VRAMBytes != nil {
			used += *m.VRAMBytes
		}
	}
	util := map[bool]float64{true: 71.5, false: 0.4}[status == resources.NodeServing]
	return resources.NodeLive{Online: ptr(true), Status: ptr(status), Role: ptr(role), Models: models,
		CPUUtilPct: ptr(23.5), MemUsedPct: ptr(41.2), DiskUsedPct: ptr(58.0), Load1: ptr(3.2),
		UptimeSeconds: ptr(1_209_600.0), GPUCount: ptr(gpus), GPUUtilAvgPct: ptr(util), GPUTempMaxC: ptr(61.0),
		ThrottleActive: ptr(false), VRAMTotalBytes: ptr(float64(gpus) * 80e9), VRAMUsedBytes: ptr(used)}
}

func ptr[T any](v T) *T { return &v }

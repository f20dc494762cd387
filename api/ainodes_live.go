package api

import (
	"context"
	"fmt"
	"slices"

	"platformapi/resources"
)

// nodeLiveValues are the live values of the AI nodes: monitoring's snapshot
// and the node agents' reports, read at once.
type nodeLiveValues struct {
	snap      resources.NodeSnapshot
	reachable bool
	agents    resources.AgentReports
}

// nodeFleet is what an AI node read knows of the fleet: the whole roster,
// the live values and each roster node's health.
type nodeFleet struct {
	roster []resources.AINode
	live   nodeLiveValues
	health map[string]resources.NodeHealth
}

// readFleet reads the whole roster and the live values of hostnames (nil:
// every node), and derives the health of every roster node (a host's
// expected GPUs depend on its VMs, so health needs the whole roster).
func (s *Server) readFleet(ctx context.Context, hostnames []string) (nodeFleet, error) {
	roster, err := allAINodes(ctx, s.svc.AINodes, resources.AINodeFilter{})
	if err != nil {
		return nodeFleet{}, err
	}
	fl := nodeFleet{roster: roster, live: s.nodeLive(ctx, hostnames),
		health: map[string]resources.NodeHealth{}}
	for _, n := range roster {
		r := resources.NodeReadings{MonitoringRead: fl.live.reachable,
			ExpectedGPUs: resources.ExpectedGPUs(n, roster), AgentSilent: fl.live.agents.Silent[n.Hostname]}
		if live, ok := fl.live.snap[n.Hostname]; ok {
			r.Live = &live
		}
		fl.health[n.Hostname] = resources.AssessNode(r)
	}
	return fl, nil
}

// allAINodes reads every roster node f keeps, page after page.
func allAINodes(ctx context.Context, nodes resources.AINodes,
	f resources.AINodeFilter) ([]resources.AINode, error) {
	var out []resources.AINode
	q := resources.PageQuery{Limit: resources.MaxPageLimit}
	for {
		pg, err := nodes.ListAINodes(ctx, f, q)
		if err != nil {
			return nil, fmt.Errorf("read the AI node roster: %w", err)
		}
		out = append(out, pg.Items...)
		if pg.Next == nil {
			return out, nil
		}
		q.After = pg.Next
	}
}

// hostsWithHealth lists the roster nodes of any one of the health states.
func (fl nodeFleet) hostsWithHealth(states []string) []string {
	out := []string{}
	for h, hl := range fl.health {
		if slices.Contains(states, hl.State) {
			out = append(out, h)
		}
	}
	return out
}

// gpuClassTotals sums, per gpu_class, every node f keeps (all pages).
func (s *Server) gpuClassTotals(ctx context.Context, f resources.AINodeFilter,
	fl nodeFleet) ([]GPUClassTotals, error) {
	nodes := fl.roster
	if f.Site != "" || f.GPUClass != "" || f.Hostnames != nil {
		var err error
		if nodes, err = allAINodes(ctx, s.svc.AINodes, f); err != nil {
			return nil, err
		}
	}
	in := make([]resources.NodeGPUs, 0, len(nodes))
	for _, n := range nodes {
		g := resources.NodeGPUs{GPUClass: n.GPUClass}
		if live, ok := fl.live.snap[n.Hostname]; ok {
			g.GPUCount, g.VRAMTotalBytes = live.GPUCount, live.VRAMTotalBytes
			g.VRAMUsedBytes = live.VRAMUsedBytes
		}
		in = append(in, g)
	}
	out := []GPUClassTotals{}
	for _, t := range resources.SumGPUClasses(in) {
		out = append(out, GPUClassTotals(t))
	}
	return out, nil
}

// encodedSize is the length of v's JSON encoding.
func encodedSize(v any) (int, error) {
	b, err := encodeJSON(v)
	return len(b), err
}

// nodeLive reads monitoring and the agents of hostnames (nil: every
// enrolled node) side by side, each bounded by resources.MonitoringTimeout.
func (s *Server) nodeLive(ctx context.Context, hostnames []string) nodeLiveValues {
	var v nodeLiveValues
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.agents = s.svc.NodeAgents.Reports(ctx, hostnames)
	}()
	v.snap, v.reachable = s.nodeSnapshot(ctx)
	<-done
	return v
}

// nodeSnapshot reads monitoring once, bounded by resources.MonitoringTimeout;
// reachable is false (and the snapshot nil) when it could not be read.
func (s *Server) nodeSnapshot(ctx context.Context) (snap resources.NodeSnapshot, reachable bool) {
	ctx, cancel := context.WithTimeout(ctx, resources.MonitoringTimeout)
	defer cancel()
	snap, err := s.svc.Monitoring.NodeSnapshot(ctx)
	if err != nil {
		loggerFrom(ctx, s.cfg.Logger).Warn("monitoring unreachable: AI node live fields are null", "error", err)
		return nil, false
	}
	return snap, true
}

// hostsWithStatus lists the nodes whose live status is one of statuses (none when
// monitoring could not be read).
func hostsWithStatus(snap resources.NodeSnapshot, statuses []string) []string {
	out := []string{}
	for h, live := range snap {
		if live.Status != nil && slices.Contains(statuses, *live.Status) {
			out = append(out, h)
		}
	}
	return out
}

// setCache fills the node's cache members from its agent's report; the
// free bytes are the file system's, or what the cap leaves when less.
func (v *AINode) setCache(rep resources.AgentReport) {
	free := rep.FS.FreeBytes
	if rep.MaxCacheBytes != nil {
		free = max(min(free, *rep.MaxCacheBytes-rep.UsedBytes), 0)
	}
	v.CacheFSTotalBytes, v.CacheFSFreeBytes = &rep.FS.TotalBytes, &rep.FS.FreeBytes
	v.CacheMaxBytes, v.CacheUsedBytes, v.CacheFreeBytes = rep.MaxCacheBytes, &rep.UsedBytes, &free
}

// view joins a roster node with its health and its live values, when
// monitoring and its agent have any for it.
func (fl nodeFleet) view(n resources.AINode) AINode {
	hl := fl.health[n.Hostname]
	v := AINode{Hostname: n.Hostname, IsVirtual: n.IsVirtual, Health: hl.State, HealthReason: hl.Reason,
		GPUClass: n.GPUClass, MgmtIP: n.MgmtIP, Site: n.Site, SpecsSummary: n.SpecsSummary,
		ParentHost: n.ParentHost, VMID: n.VMID, Services: nonNil(n.Services), AgentURL: n.AgentURL,
		Cluster: NullOf[NodeCluster](nil)}
	if rep, ok := fl.live.agents.Answered[n.Hostname]; ok {
		v.setCache(rep)
	}
	live, ok := fl.live.snap[n.Hostname]
	if !ok {
		return v
	}
	v.MonitoringReachable = true
	v.CollectorStale, v.CPUUtilPct, v.DiskUsedPct, v.GPUCount = live.CollectorStale, live.CPUUtilPct, live.DiskUsedPct, live.GPUCount
	v.GPUTempMaxC, v.GPUUtilAvgPct, v.Load1, v.MemUsedPct = live.GPUTempMaxC, live.GPUUtilAvgPct, live.Load1, live.MemUsedPct
	v.Online, v.Role, v.Status, v.ThrottleActive = live.Online, live.Role, live.Status, live.ThrottleActive
	v.UptimeSeconds, v.VRAMTotalBytes, v.VRAMUsedBytes = live.UptimeSeconds, live.VRAMTotalBytes, live.VRAMUsedBytes
	v.VRAMFreeBytes = resources.VRAMFree(live.VRAMTotalBytes, live.VRAMUsedBytes)
	if live.Cluster != nil {
		v.Cluster = NullOf(&NodeCluster{Name: live.Cluster.Name, Role: live.Cluster.Role})
	}
	if live.Models != nil {
		v.Models = make([]NodeModel, 0, len(live.Models))
		for _, m := range live.Models {
			v.Models = append(v.Models, NodeModel{Model: m.Model, Repo: m.Repo, State: m.State, VRAMBytes: m.VRAMBytes})
		}
	}
	return v
}

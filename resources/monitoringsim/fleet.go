package monitoringsim

import (
	"maps"
	"slices"

	"platformapi/resources"
)

// Machine is the simulated hardware behind one roster node and what it is
// doing.
type Machine struct {
	// GPUs: for a host, every GPU installed in the machine, those passed
	// through to its VMs included; for a VM, the GPUs passed through to it.
	GPUs int
	// Live is what the node is doing (online, status, role, cluster, loaded
	// models, load). Its GPU count and VRAM are not taken from here: see
	// Sim.SetRoster.
	Live resources.NodeLive
}

// Fleet is a simulated fleet: its machines by hostname.
type Fleet map[string]Machine

// FromRoster returns a simulation of fleet's machines as roster describes
// them (see SetRoster).
func FromRoster(roster []resources.AINode, fleet Fleet) *Sim {
	s := New()
	s.fleet = maps.Clone(fleet)
	s.SetRoster(roster)
	return s
}

// SetRoster makes the simulation report the machines of its fleet that
// roster lists, as their exporters would, replacing what it reported for
// any machine of the fleet before (a machine the roster does not list is
// not reported). A GPU passed through to a VM (a roster node with
// is_virtual and parent_host) is counted once, on the VM: the host's GPU
// count and VRAM total leave it out. VRAM total is the GPU count times the
// memory of the node's gpu_class (resources.GPUMemoryBytes; null for a
// class the platform does not know); VRAM used is the sum of the loaded
// models'. A machine that is not online, or shows no GPU, reports no GPU
// values.
func (s *Sim) SetRoster(roster []resources.AINode) {
	passed := map[string]int{} // GPUs passed through to VMs, by host
	for _, n := range roster {
		if m, ok := s.fleet[n.Hostname]; ok && n.IsVirtual && n.ParentHost != nil {
			passed[*n.ParentHost] += m.GPUs
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for h := range s.fleet {
		delete(s.nodes, h)
	}
	for _, n := range roster {
		m, ok := s.fleet[n.Hostname]
		if !ok {
			continue
		}
		gpus := m.GPUs
		if !n.IsVirtual {
			gpus = max(0, gpus-passed[n.Hostname])
		}
		s.nodes[n.Hostname] = m.report(gpus, n.GPUClass)
	}
}

// report is what the machine's exporters say with gpus GPUs of class
// visible to it.
func (m Machine) report(gpus int, class *string) resources.NodeLive {
	l := m.Live
	l.Models = slices.Clone(l.Models)
	if l.Online == nil || !*l.Online || gpus == 0 {
		l.GPUCount, l.GPUUtilAvgPct, l.GPUTempMaxC, l.ThrottleActive = nil, nil, nil, nil
		l.VRAMTotalBytes, l.VRAMUsedBytes = nil, nil
		return l
	}
	used := 0.0
	for _, model := range l.Models {
		if model.VRAMBytes != nil {
			used += *model.VRAMBytes
		}
	}
	l.GPUCount, l.VRAMUsedBytes, l.VRAMTotalBytes = &gpus, &used, nil
	if per, ok := resources.GPUMemoryBytes(deref(class)); ok {
		l.VRAMTotalBytes = ptr(float64(gpus) * per)
	}
	return l
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

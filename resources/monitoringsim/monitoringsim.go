// Package monitoringsim is an in-process simulated monitoring system
// implementing resources.Monitor, with fault injection (unreachable, slow,
// a silent collector) for the failure paths the contract names. The demo
// world and the tests use it in place of Prometheus.
package monitoringsim

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"platformapi/resources"
	"platformapi/resources/internal/fault"
)

// Sim is a simulated monitoring system. It is safe for concurrent use, and
// every setting may change at any time, also while calls are in flight.
type Sim struct {
	fault.Injector // SetUnreachable, FailNext, SetDelay, Calls
	mu             sync.Mutex
	nodes          map[string]resources.NodeLive
	silent         map[string]time.Duration // how long each node's collector has been silent
	fleet          Fleet                    // the machines SetRoster reports (FromRoster)
}

// New returns a reachable simulated monitoring system that knows no node.
func New() *Sim {
	return &Sim{nodes: map[string]resources.NodeLive{}, silent: map[string]time.Duration{}}
}

// Set makes monitoring report live for hostname (replacing what it had).
func (s *Sim) Set(hostname string, live resources.NodeLive) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[hostname] = live
}

// Forget makes monitoring stop knowing hostname.
func (s *Sim) Forget(hostname string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, hostname)
	delete(s.silent, hostname)
}

// SilenceCollector says hostname's metrics collector has been silent for d:
// more than resources.CollectorStaleAfter makes the node's collector_stale
// true; 0 makes it report again.
func (s *Sim) SilenceCollector(hostname string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silent[hostname] = d
}

// NodeSnapshot returns the live state of every node the simulation knows,
// with collector_stale from the collector silences.
func (s *Sim) NodeSnapshot(ctx context.Context) (resources.NodeSnapshot, error) {
	if err := s.Enter(ctx, "monitoringsim", resources.ErrMonitoringUnreachable); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := resources.NodeSnapshot{}
	for h, live := range s.nodes {
		live.Models = slices.Clone(live.Models)
		stale := resources.CollectorStale(s.silent[h])
		live.CollectorStale = &stale
		out[h] = live
	}
	return out, nil
}

// Hostnames lists the nodes the simulation knows, sorted.
func (s *Sim) Hostnames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.nodes))
}

var _ resources.Monitor = (*Sim)(nil)

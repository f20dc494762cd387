package app

import (
	"context"
	"fmt"

	"platformapi/resources"
	"platformapi/resources/monitoringsim"
	"platformapi/resources/prometheus"
)

// monitor picks the monitoring of the AI nodes: Prometheus when a URL is
// configured, else the in-process simulated fleet (demo and development),
// which reports the demo machines the roster in the database lists.
func (m *Main) monitor(ctx context.Context, o ServeOptions) (resources.Monitor, error) {
	if o.PrometheusURL != "" {
		return prometheus.New(prometheus.Config{URL: o.PrometheusURL, Client: m.tracing.Client()}), nil
	}
	m.opts.Logger.Warn("no Prometheus configured (--prometheus-url): AI node live values come from the simulated fleet")
	m.sim = monitoringsim.Demo()
	return m.sim, m.syncSimRoster(ctx)
}

// syncSimRoster teaches the simulated fleet, when it is in use, the roster
// in the database (GPU classes, VMs and their hosts): at start and after
// the demo world's inventory import. An import with `portal inventory
// import` beside a running server is seen at its next start.
func (m *Main) syncSimRoster(ctx context.Context) error {
	if m.sim == nil {
		return nil
	}
	var roster []resources.AINode
	q := resources.PageQuery{Limit: resources.MaxPageLimit}
	for {
		pg, err := m.store.ListAINodes(ctx, resources.AINodeFilter{}, q)
		if err != nil {
			return fmt.Errorf("reading the AI node roster for the simulated fleet: %w", err)
		}
		roster = append(roster, pg.Items...)
		if pg.Next == nil {
			m.sim.SetRoster(roster)
			return nil
		}
		q.After = pg.Next
	}
}

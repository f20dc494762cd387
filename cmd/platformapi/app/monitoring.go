package app

import (
	"platformapi/resources"
	"platformapi/resources/monitoringsim"
	"platformapi/resources/prometheus"
)

// monitor picks the monitoring of the AI nodes: Prometheus when a URL is
// configured, else the in-process simulated fleet (demo and development).
func (m *Main) monitor(o ServeOptions) resources.Monitor {
	if o.PrometheusURL != "" {
		return prometheus.New(prometheus.Config{URL: o.PrometheusURL})
	}
	m.opts.Logger.Warn("no Prometheus configured (--prometheus-url): AI node live values come from the simulated fleet")
	return monitoringsim.Demo()
}

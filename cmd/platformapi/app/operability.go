package app

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"platformapi/api"
	"platformapi/resources"
)

// BuildInfo is what `platformapi version` reports, read from the binary's
// build information (module version, VCS revision and time, Go version).
type BuildInfo struct {
	Version   string `json:"version"`            // module version; (devel) for a local build
	Revision  string `json:"revision,omitempty"` // VCS commit the binary was built from
	Time      string `json:"time,omitempty"`     // commit time
	Modified  bool   `json:"modified"`           // the work tree had uncommitted changes
	GoVersion string `json:"go_version"`
	API       string `json:"api_version"`
	Platform  string `json:"platform_version"`
}

// readBuildInfo reads the running binary's build information.
func readBuildInfo() BuildInfo {
	b := BuildInfo{Version: "unknown", GoVersion: runtime.Version(), API: resources.APIVersion,
		Platform: resources.PlatformVersion}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Version = info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `--version` prints.
func (b BuildInfo) String() string {
	s := "platformapi " + b.Version
	if b.Revision != "" {
		s += " (" + b.Revision
		if b.Modified {
			s += ", modified"
		}
		if b.Time != "" {
			s += ", " + b.Time
		}
		s += ")"
	}
	return s + " " + b.GoVersion + ", API " + b.API + ", platform " + b.Platform
}

func versionCommand(out io.Writer) *cobra.Command {
	return &cobra.Command{Use: "version", Short: "Print the build's version, VCS revision and Go version as JSON",
		Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error { return PrintJSON(out, readBuildInfo()) }}
}

// newRegistry is the process's Prometheus registry: Go runtime, process,
// build and database-pool collectors; the API and the worker add theirs.
func (m *Main) newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(), collectors.NewDBStatsCollector(m.db.DB, "platformapi"),
		buildInfoMetric(readBuildInfo()))
	return reg
}

// buildInfoMetric is platformapi_build_info: always 1, its labels the
// build's version, VCS revision and API and platform versions, so a
// dashboard can join any series with the build that served it.
func buildInfoMetric(b BuildInfo) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "platformapi_build_info",
		Help: "Always 1; labels: the binary's version, VCS revision, API and platform versions.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision,
			"api_version": b.API, "platform_version": b.Platform}})
	g.Set(1)
	return g
}

// logWhereServed says where everything is, and when the API is off, how to
// turn it on.
func (m *Main) logWhereServed(ctx context.Context, o ServeOptions, addr string) {
	scheme := "http://"
	if o.TLSCertFile != "" {
		scheme = "https://"
	}
	base := scheme + addr
	metrics := base + api.MetricsPath
	if o.MetricsAddr != "" {
		metrics = scheme + o.MetricsAddr + api.MetricsPath
	}
	m.opts.Logger.Info("serving", "addr", addr, "api", base+api.Prefix, "mcp", base+"/mcp",
		"docs", base+api.Prefix+"/docs", "openapi", base+api.Prefix+"/openapi.json",
		"healthz", base+api.HealthzPath, "readyz", base+api.ReadyzPath, "metrics", metrics,
		"version", readBuildInfo().String())
	st, err := m.store.Settings(ctx)
	if err != nil || st.APIEnabled {
		return
	}
	m.opts.Logger.Warn("the API is off: every "+api.Prefix+" path and /mcp answer 404 until an administrator "+
		"turns it on (a running server sees the switch within a second)", "enable_with", m.enableCommand(ctx))
}

// enableCommand is the command line that turns the API on for this
// installation (with an external database: under the same DATABASE_URL),
// naming an active administrator when there is one.
func (m *Main) enableCommand(ctx context.Context) string {
	as := "ADMIN_EMAIL"
	page, err := m.store.ListUsers(ctx, resources.UserFilter{Role: "admin", Status: []string{"active"}},
		resources.PageQuery{Limit: 1})
	if err == nil && len(page.Items) > 0 {
		as = page.Items[0].Email
	}
	args := []string{"platformapi"}
	if m.embedded != nil && m.opts.DataDir != ".platformapi" {
		args = append(args, "--data-dir", m.opts.DataDir)
	}
	cmd := strings.Join(append(args, "portal", "api", "enable", "--as", as), " ")
	if as == "ADMIN_EMAIL" {
		cmd = fmt.Sprintf("%s (no active administrator yet: first %s)", cmd,
			strings.Join(append(args, "portal", "user", "create", "--email", "E", "--name", "N", "--role", "admin"), " "))
	}
	return cmd
}

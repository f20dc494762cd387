package deploycheck

import (
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// KubeVersion is the Kubernetes version charts are linted and rendered for.
const KubeVersion = "v1.33.0"

// Manifest is one rendered Kubernetes document: the template it came from
// and its YAML.
type Manifest struct {
	Source string // template path, e.g. platformapi/templates/deployment.yaml
	Hook   bool   // a Helm hook (rendered outside the release's manifest)
	YAML   string
}

// Lint runs `helm lint --strict` on the chart with vals: any error or
// warning fails; informational messages are returned for the log.
func Lint(chartDir string, vals map[string]any) ([]string, error) {
	l := action.NewLint()
	l.Strict = true
	l.Namespace = "platform"
	kv, err := chartutil.ParseKubeVersion(KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("parse kube version: %w", err)
	}
	l.KubeVersion = kv
	res := l.Run([]string{chartDir}, vals)
	var info, bad []string
	for _, m := range res.Messages {
		if m.Severity >= support.WarningSev {
			bad = append(bad, m.Error())
		} else {
			info = append(info, m.Error())
		}
	}
	for _, e := range res.Errors {
		bad = append(bad, e.Error())
	}
	if len(bad) > 0 {
		return info, fmt.Errorf("helm lint: %s", strings.Join(bad, "; "))
	}
	return info, nil
}

// Render is `helm template` of the chart with vals as release "platformapi"
// in namespace "platform": the release's manifests and its hooks, in the
// order Helm would install them, and the rendered NOTES.txt.
func Render(chartDir string, vals map[string]any) ([]Manifest, string, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, "", fmt.Errorf("load chart %s: %w", chartDir, err)
	}
	in := action.NewInstall(&action.Configuration{})
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = "platformapi", "platform"
	if in.KubeVersion, err = chartutil.ParseKubeVersion(KubeVersion); err != nil {
		return nil, "", fmt.Errorf("parse kube version: %w", err)
	}
	rel, err := in.Run(ch, vals)
	if err != nil {
		return nil, "", fmt.Errorf("render chart: %w", err)
	}
	var out []Manifest
	for _, h := range rel.Hooks {
		out = append(out, splitManifests(h.Path, h.Manifest, true)...)
	}
	for _, m := range releaseutil.SplitManifests(rel.Manifest) {
		out = append(out, splitManifests(sourceOf(m), m, false)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out, rel.Info.Notes, nil
}

func splitManifests(source, text string, hook bool) []Manifest {
	var out []Manifest
	for _, m := range releaseutil.SplitManifests(text) {
		if strings.TrimSpace(stripComments(m)) == "" {
			continue
		}
		out = append(out, Manifest{Source: source, Hook: hook, YAML: m})
	}
	return out
}

// sourceOf reads the "# Source: …" line Helm puts above each manifest.
func sourceOf(m string) string {
	for _, line := range strings.Split(m, "\n") {
		if s, ok := strings.CutPrefix(line, "# Source: "); ok {
			return s
		}
	}
	return ""
}

func stripComments(m string) string {
	var b strings.Builder
	for _, line := range strings.Split(m, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

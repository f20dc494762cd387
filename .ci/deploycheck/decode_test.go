package deploycheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDecode_Strict_RefusesWhatKubernetesWouldNot: the decoding the chart
// tests rely on fails on an unknown field, a duplicate key, a wrong type,
// an unexpected kind and an invalid name.
func TestDecode_Strict_RefusesWhatKubernetesWouldNot(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: p\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown field", head + "spec:\n  replica: 2\n", `unknown field "spec.replica"`},
		{"nested unknown field", head + "spec:\n  template:\n    spec:\n      containers:\n" +
			"        - name: c\n          readinessProbe:\n            httpGet:\n              pth: /readyz\n",
			`unknown field "spec.template.spec.containers[0].readinessProbe.httpGet.pth"`},
		{"duplicate key", head + "  labels:\n    a: b\n    a: c\n", `"a" already set`},
		{"wrong type", head + "spec:\n  replicas: two\n", "cannot unmarshal"},
		{"bad quantity", head + "spec:\n  template:\n    spec:\n      containers:\n" +
			"        - name: c\n          resources:\n            limits:\n              memory: lots\n", "quantities must match"},
		{"unexpected kind", "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata:\n  name: api\n", "unexpected kind"},
		{"invalid name", "apiVersion: v1\nkind: Service\nmetadata:\n  name: Api_1\n  namespace: p\n", "Service/Api_1"},
		{"unknown ServiceMonitor field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n" +
			"metadata:\n  name: m\n  namespace: p\nspec:\n  endpoints:\n    - port: http\n      intervall: 5s\n",
			`unknown field "spec.endpoints[0].intervall"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(Manifest{Source: "test.yaml", YAML: tc.yaml})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestChartValues_EveryValueDocumented: every value in values.yaml has a
// comment above it and is named in the chart's README.
func TestChartValues_EveryValueDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	walkValues(doc.Content[0], "", func(path string, key *yaml.Node) {
		n++
		if !strings.HasPrefix(strings.TrimSpace(key.HeadComment), "# --") {
			t.Errorf("values.yaml: %s (line %d) has no '# --' comment above it", path, key.Line)
		}
		if !strings.Contains(string(readme), "`"+path+"`") {
			t.Errorf("README.md does not document `%s`", path)
		}
	})
	if n < 40 {
		t.Fatalf("found %d values: the walk is broken", n)
	}
}

// walkValues calls leaf for each value that is not a map of further values
// (a list or a map given whole, like resources, is one value).
func walkValues(m *yaml.Node, prefix string, leaf func(path string, key *yaml.Node)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		path := prefix + key.Value
		if val.Kind == yaml.MappingNode && len(val.Content) > 0 && key.HeadComment == "" {
			walkValues(val, path+".", leaf)
			continue
		}
		leaf(path, key)
	}
}

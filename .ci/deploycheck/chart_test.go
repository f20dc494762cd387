package deploycheck

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
)

const chartDir = "../../deploy/helm/platformapi"

// fullValues turn on everything the chart has: two replicas with the
// Secret made by the chart, the node agent, the ServiceMonitor and the
// NetworkPolicy.
func fullValues() map[string]any {
	return map[string]any{
		"replicaCount": 2,
		"secrets": map[string]any{"create": true, "databaseURL": "postgres://platformapi@db:5432/platformapi",
			"tokenPepper": "pepper-for-the-render", "redisURL": "redis://redis:6379/0"},
		"nodeAgent":      map[string]any{"enabled": true, "nodeKeysSecret": "platformapi-node-keys"},
		"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}},
		"networkPolicy":  map[string]any{"enabled": true},
	}
}

// render renders the chart with vals and decodes every manifest strictly.
func render(t *testing.T, vals map[string]any) (map[string]Object, string) {
	t.Helper()
	ms, notes, err := Render(chartDir, vals)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]Object{}
	for _, m := range ms {
		o, err := Decode(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := objs[o.ID()]; dup {
			t.Fatalf("%s rendered twice", o.ID())
		}
		objs[o.ID()] = o
	}
	return objs, notes
}

func ids(objs map[string]Object) []string {
	var out []string
	for id, o := range objs {
		if o.Hook {
			id += " (hook)"
		}
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// TestChart_LintStrict_DefaultsAndEverythingOn runs helm lint --strict
// with the default values and with every option on.
func TestChart_LintStrict_DefaultsAndEverythingOn(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": nil, "everything on": fullValues()} {
		t.Run(name, func(t *testing.T) {
			info, err := Lint(chartDir, vals)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range info {
				t.Log(m)
			}
		})
	}
}

// TestChart_Defaults_ServerServicePDBAndMigrationHook renders the default
// values: two replicas reading an existing Secret, their Service and
// PodDisruptionBudget, and the migration Job as a hook; nothing optional.
func TestChart_Defaults_ServerServicePDBAndMigrationHook(t *testing.T) {
	objs, notes := render(t, nil)
	want := []string{"Deployment/platformapi", "Job/platformapi-migrate (hook)",
		"PodDisruptionBudget/platformapi", "Service/platformapi"}
	if d := cmp.Diff(want, ids(objs)); d != "" {
		t.Fatalf("rendered resources (-want +got):\n%s", d)
	}
	checkServer(t, objs, 2, "platformapi")
	if !strings.Contains(notes, "kubectl -n platform create secret generic platformapi") {
		t.Errorf("NOTES do not tell how to create the Secret:\n%s", notes)
	}
}

// TestChart_AllowedNetworksSet_NotesSayPortForwardComesFromLoopback: the
// NOTES' check (kubectl port-forward, then curl /readyz) reaches the pod
// from 127.0.0.1; with server.allowedNetworks set (the README's install
// sets it) loopback is served only when listed, so the NOTES say so
// instead of offering a check that answers 404.
func TestChart_AllowedNetworksSet_NotesSayPortForwardComesFromLoopback(t *testing.T) {
	_, notes := render(t, map[string]any{"server": map[string]any{
		"allowedNetworks": "10.0.0.0/8,100.64.0.0/10"}})
	for _, want := range []string{"port-forward", "127.0.0.1/32"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
}

// TestChart_TwoReplicasEverythingOn renders two replicas with the node
// agent, the ServiceMonitor and the NetworkPolicy on, and checks each
// resource's invariants. `go test -v -run TwoReplicas` prints the list.
func TestChart_TwoReplicasEverythingOn(t *testing.T) {
	objs, _ := render(t, fullValues())
	want := []string{"DaemonSet/platformapi-node-agent", "Deployment/platformapi",
		"Job/platformapi-migrate (hook)", "NetworkPolicy/platformapi", "NetworkPolicy/platformapi-node-agent",
		"PodDisruptionBudget/platformapi", "Secret/platformapi (hook)", "Service/platformapi",
		"ServiceMonitor/platformapi"}
	got := ids(objs)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("rendered resources (-want +got):\n%s", d)
	}
	for _, id := range got {
		t.Log(id)
	}
	checkServer(t, objs, 2, "platformapi")
	checkSecret(t, objs)
	checkNodeAgent(t, objs)
	checkServiceMonitor(t, objs)
	checkNetworkPolicies(t, objs)
}

// TestChart_OneReplica_NoPDBAndRedisOptional: a single replica gets no
// PodDisruptionBudget (it would block every drain) and may run without Redis.
func TestChart_OneReplica_NoPDBAndRedisOptional(t *testing.T) {
	objs, _ := render(t, map[string]any{"replicaCount": 1})
	if _, ok := objs["PodDisruptionBudget/platformapi"]; ok {
		t.Error("a PodDisruptionBudget for one replica")
	}
	checkServer(t, objs, 1, "platformapi")
}

// TestChart_Refusals: values that cannot work fail the render with a
// message naming the value.
func TestChart_Refusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals map[string]any
		want string
	}{
		{"two replicas, created Secret without Redis", map[string]any{"secrets": map[string]any{
			"create": true, "databaseURL": "postgres://db/p", "tokenPepper": "p"}}, "secrets.redisURL is required"},
		{"created Secret without database URL", map[string]any{"replicaCount": 1,
			"secrets": map[string]any{"create": true, "tokenPepper": "p"}}, "secrets.databaseURL is required"},
		{"created Secret without pepper", map[string]any{"replicaCount": 1,
			"secrets": map[string]any{"create": true, "databaseURL": "postgres://db/p"}}, "secrets.tokenPepper is required"},
		{"node agent without node keys", map[string]any{"nodeAgent": map[string]any{"enabled": true}},
			"nodeAgent.nodeKeysSecret is required"},
		{"stop delay and drain past the grace period", serverValues("stopDelay", "15s"),
			"server.stopDelay (15s) + server.requestTimeout (30s) + 2s = 47s exceeds " +
				"server.terminationGracePeriodSeconds (45)"},
		{"raised request timeout, grace period kept", serverValues("requestTimeout", "1m"),
			"server.stopDelay (5s) + server.requestTimeout (1m) + 2s = 67s exceeds " +
				"server.terminationGracePeriodSeconds (45)"},
		{"grace period lowered", serverValues("terminationGracePeriodSeconds", 30),
			"server.stopDelay (5s) + server.requestTimeout (30s) + 2s = 37s exceeds " +
				"server.terminationGracePeriodSeconds (30)"},
		{"request timeout in extraArgs", serverValues("extraArgs", []any{"--request-timeout=90s"}),
			"set server.requestTimeout, not --request-timeout in server.extraArgs"},
		{"stop delay in extraArgs", serverValues("extraArgs", []any{"--stop-delay", "40s"}),
			"set server.stopDelay, not --stop-delay in server.extraArgs"},
		{"request timeout 0: serve's 30s", map[string]any{"server": map[string]any{"stopDelay": "15s",
			"requestTimeout": "0s"}}, "server.requestTimeout (0s, serve's 30s) + 2s = 47s exceeds"},
		{"stop delay not a duration", serverValues("stopDelay", "5"),
			`server.stopDelay "5" is not a duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Render(chartDir, tc.vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// serverValues are values setting one member of server.
func serverValues(name string, v any) map[string]any {
	return map[string]any{"server": map[string]any{name: v}}
}

// TestChart_StopBudget_FitsTheGracePeriod_Rendered: a stop delay and
// request timeout whose drain ends within the grace period render, the
// timeout passed to serve; exactly at the grace period is still in time.
func TestChart_StopBudget_FitsTheGracePeriod_Rendered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server map[string]any
		want   []string
	}{
		{"defaults", nil, []string{"--stop-delay=5s", "--request-timeout=30s"}},
		{"raised together", map[string]any{"stopDelay": "10s", "requestTimeout": "1m0s",
			"terminationGracePeriodSeconds": 72}, []string{"--stop-delay=10s", "--request-timeout=1m0s"}},
		{"fractions", map[string]any{"stopDelay": "1.5s", "requestTimeout": "500ms",
			"terminationGracePeriodSeconds": 4}, []string{"--stop-delay=1.5s", "--request-timeout=500ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vals map[string]any
			if tc.server != nil {
				vals = map[string]any{"server": tc.server}
			}
			objs, _ := render(t, vals)
			c := onlyContainer(t, get[*appsv1.Deployment](t, objs, "Deployment/platformapi").Spec.Template.Spec)
			var got []string
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--stop-delay=") || strings.HasPrefix(a, "--request-timeout=") {
					got = append(got, a)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("stop arguments (-want +got):\n%s", d)
			}
		})
	}
}

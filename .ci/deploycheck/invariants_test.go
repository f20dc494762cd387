package deploycheck

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// get returns the decoded object id as T, failing the test when missing.
func get[T any](t *testing.T, objs map[string]Object, id string) T {
	t.Helper()
	o, ok := objs[id]
	if !ok {
		t.Fatalf("%s was not rendered", id)
	}
	return o.Value.(T)
}

// selects reports whether sel selects a pod (or Service) with labels set.
func selects(t *testing.T, sel *metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return !s.Empty() && s.Matches(labels.Set(set))
}

// checkServer: replicas, the selector selects the pods, probes on
// /healthz and /readyz at the named port, non-root and read-only, the
// Secret's environment, the Service and PDB select exactly these pods,
// and the migration hook Job runs `migrate up` with the database URL.
func checkServer(t *testing.T, objs map[string]Object, replicas int32, secret string) {
	t.Helper()
	d := get[*appsv1.Deployment](t, objs, "Deployment/platformapi")
	pod := d.Spec.Template
	if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
		t.Errorf("replicas %v, want %d", d.Spec.Replicas, replicas)
	}
	if !selects(t, d.Spec.Selector, pod.Labels) {
		t.Errorf("the Deployment's selector %v does not select its pods %v", d.Spec.Selector, pod.Labels)
	}
	c := onlyContainer(t, pod.Spec)
	if c.Args[0] != "serve" || !contains(c.Args, "--addr=0.0.0.0:8080") {
		t.Errorf("server args %q", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("server ports %+v", c.Ports)
	}
	for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz",
		c.StartupProbe: "/healthz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != "http" {
			t.Errorf("probe %+v, want GET %s on port http", probe, want)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("server resources %+v: want CPU requested and memory limited", c.Resources)
	}
	checkLocked(t, "server", pod.Spec, c)
	checkStopBudget(t, pod.Spec, c.Args)
	checkSecretEnv(t, c.Env, secret, replicas > 1)
	checkSelectsOnly(t, objs, pod.Labels)
	checkMigrations(t, objs, secret)
}

// checkStopBudget: on SIGTERM the server keeps serving for --stop-delay
// (at least 5 s) with /readyz failing, so the endpoints and kube-proxy drop
// the pod before its listener closes, and the grace period holds that
// delay, the drain (--request-timeout, 30 s, and 2 s) and the jobs' 2 s.
func checkStopBudget(t *testing.T, spec corev1.PodSpec, args []string) {
	t.Helper()
	delay, timeout := durationArg(t, args, "--stop-delay"), durationArg(t, args, "--request-timeout")
	if delay < 5*time.Second {
		t.Errorf("server --stop-delay %v, want at least 5s (args %q)", delay, args)
	}
	if timeout != 30*time.Second {
		t.Errorf("server --request-timeout %v, want 30s (args %q)", timeout, args)
	}
	drain, jobs := timeout+2*time.Second, 2*time.Second
	grace := spec.TerminationGracePeriodSeconds
	if grace == nil || time.Duration(*grace)*time.Second < delay+drain+jobs {
		t.Errorf("terminationGracePeriodSeconds %v, want at least %v (stop delay %v, drain %v, jobs %v)",
			grace, delay+drain+jobs, delay, drain, jobs)
	}
}

// durationArg is the duration of the argument flag=… in args (0 without).
func durationArg(t *testing.T, args []string, flag string) time.Duration {
	t.Helper()
	var d time.Duration
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			var err error
			if d, err = time.ParseDuration(v); err != nil {
				t.Fatalf("server arg %q: %v", a, err)
			}
		}
	}
	return d
}

func onlyContainer(t *testing.T, spec corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("%d containers, %d init containers: want 1, 0", len(spec.Containers), len(spec.InitContainers))
	}
	return spec.Containers[0]
}

// checkLocked: non-root numeric user, no service account token, and a
// container that cannot escalate, holds no capability and writes nothing.
func checkLocked(t *testing.T, what string, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("%s: pod security context %+v: want runAsNonRoot and a non-zero runAsUser", what, psc)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: the service account token is mounted", what)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: container security context %+v: want read-only root, no escalation, drop ALL", what, sc)
	}
}

// checkSecretEnv: DATABASE_URL, the pepper and REDIS_URL come from the
// Secret; REDIS_URL is required with several replicas.
func checkSecretEnv(t *testing.T, env []corev1.EnvVar, secret string, redisRequired bool) {
	t.Helper()
	got := map[string]string{}
	for _, e := range env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		got[e.Name] = ref.Name + "/" + ref.Key
		if e.Name == "REDIS_URL" && (ref.Optional == nil || *ref.Optional == redisRequired) {
			t.Errorf("REDIS_URL optional %v with redis required %v", ref.Optional, redisRequired)
		}
	}
	want := map[string]string{"DATABASE_URL": secret + "/DATABASE_URL",
		"PLATFORMAPI_TOKEN_PEPPER": secret + "/PLATFORMAPI_TOKEN_PEPPER", "REDIS_URL": secret + "/REDIS_URL"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("environment from Secrets (-want +got):\n%s", d)
	}
}

// checkSelectsOnly: the Service and the PodDisruptionBudget (when
// rendered) select the server pods and not the node agents'.
func checkSelectsOnly(t *testing.T, objs map[string]Object, podLabels map[string]string) {
	t.Helper()
	var agentLabels map[string]string
	if o, ok := objs["DaemonSet/platformapi-node-agent"]; ok {
		agentLabels = o.Value.(*appsv1.DaemonSet).Spec.Template.Labels
	}
	svc := get[*corev1.Service](t, objs, "Service/platformapi")
	sel := &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}
	if !selects(t, sel, podLabels) || (agentLabels != nil && selects(t, sel, agentLabels)) {
		t.Errorf("the Service's selector %v: want the server pods %v only", svc.Spec.Selector, podLabels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("Service ports %+v: want one, to the port named http", svc.Spec.Ports)
	}
	o, ok := objs["PodDisruptionBudget/platformapi"]
	if !ok {
		return
	}
	pdb := o.Value.(*policyv1.PodDisruptionBudget)
	if !selects(t, pdb.Spec.Selector, podLabels) || (agentLabels != nil && selects(t, pdb.Spec.Selector, agentLabels)) {
		t.Errorf("the PDB's selector %v: want the server pods %v only", pdb.Spec.Selector, podLabels)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PDB minAvailable %v, want 1", pdb.Spec.MinAvailable)
	}
}

// checkMigrations: the Job is a pre-install and pre-upgrade hook running
// `migrate up` once (no restart) with the database URL, locked down.
func checkMigrations(t *testing.T, objs map[string]Object, secret string) {
	t.Helper()
	j := get[*batchv1.Job](t, objs, "Job/platformapi-migrate")
	if got := j.Annotations["helm.sh/hook"]; got != "pre-install,pre-upgrade" {
		t.Errorf("Job hook annotation %q, want pre-install,pre-upgrade", got)
	}
	c := onlyContainer(t, j.Spec.Template.Spec)
	if !cmp.Equal(c.Args[:2], []string{"migrate", "up"}) || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("migration args %q restart %q", c.Args, j.Spec.Template.Spec.RestartPolicy)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "DATABASE_URL" || c.Env[0].ValueFrom.SecretKeyRef.Name != secret {
		t.Errorf("migration env %+v: want DATABASE_URL from %s only", c.Env, secret)
	}
	checkLocked(t, "migrations", j.Spec.Template.Spec, c)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkSecret: the chart's Secret is a hook weighed before the migration
// Job (which needs it) and holds the three keys.
func checkSecret(t *testing.T, objs map[string]Object) {
	t.Helper()
	s := get[*corev1.Secret](t, objs, "Secret/platformapi")
	j := get[*batchv1.Job](t, objs, "Job/platformapi-migrate")
	if s.Annotations["helm.sh/hook"] != j.Annotations["helm.sh/hook"] ||
		!(s.Annotations["helm.sh/hook-weight"] < j.Annotations["helm.sh/hook-weight"]) {
		t.Errorf("Secret hook %v, Job hook %v: the Secret must come first", s.Annotations, j.Annotations)
	}
	var keys []string
	for k := range s.StringData {
		keys = append(keys, k)
	}
	if d := cmp.Diff([]string{"DATABASE_URL", "PLATFORMAPI_TOKEN_PEPPER", "REDIS_URL"}, keys,
		cmpSorted); d != "" {
		t.Errorf("Secret keys (-want +got):\n%s", d)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// checkNodeAgent: GPU nodes only, the store read only and the cache
// writable at the host's own paths, the node's key from the Secret by node
// name, the agent port on the host, probes on /healthz, locked down.
func checkNodeAgent(t *testing.T, objs map[string]Object) {
	t.Helper()
	ds := get[*appsv1.DaemonSet](t, objs, "DaemonSet/platformapi-node-agent")
	spec := ds.Spec.Template.Spec
	if !selects(t, ds.Spec.Selector, ds.Spec.Template.Labels) {
		t.Errorf("the DaemonSet's selector does not select its pods")
	}
	if d := cmp.Diff(map[string]string{"nvidia.com/gpu.present": "true"}, spec.NodeSelector); d != "" {
		t.Errorf("node selector (-want +got):\n%s", d)
	}
	c := onlyContainer(t, spec)
	checkLocked(t, "node agent", spec, c)
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for name, root := range map[string]string{"store": "STORE_ROOT", "cache": "CACHE_ROOT"} {
		m, v, path := mounts[name], vols[name], env["PLATFORMAPI_NODE_AGENT_"+root]
		if v.HostPath == nil || v.HostPath.Path != path || m.MountPath != path || m.ReadOnly != (name == "store") {
			t.Errorf("%s: volume %+v mount %+v env %q: want the host path at the same path", name, v, m, path)
		}
	}
	keys := vols["node-keys"]
	if keys.Secret == nil || keys.Secret.SecretName != "platformapi-node-keys" ||
		!strings.HasPrefix(env["PLATFORMAPI_NODE_AGENT_KEY_FILE"], mounts["node-keys"].MountPath+"/$(NODE_NAME)") {
		t.Errorf("node key: volume %+v, key file %q", keys, env["PLATFORMAPI_NODE_AGENT_KEY_FILE"])
	}
	checkSecretReadable(t, spec, keys)
	if len(c.Ports) != 1 || c.Ports[0].HostPort != 9441 || c.ReadinessProbe == nil ||
		c.ReadinessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("agent ports %+v readiness %+v", c.Ports, c.ReadinessProbe)
	}
}

// checkServiceMonitor: it selects the Service and scrapes /metrics on its port.
func checkServiceMonitor(t *testing.T, objs map[string]Object) {
	t.Helper()
	sm := get[*ServiceMonitor](t, objs, "ServiceMonitor/platformapi")
	svc := get[*corev1.Service](t, objs, "Service/platformapi")
	if !selects(t, &sm.Spec.Selector, svc.Labels) || sm.Labels["release"] != "prometheus" {
		t.Errorf("ServiceMonitor selector %v labels %v: want the Service %v", sm.Spec.Selector, sm.Labels, svc.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name ||
		sm.Spec.Endpoints[0].Path != "/metrics" || !cmp.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{"platform"}) {
		t.Errorf("ServiceMonitor spec %+v", sm.Spec)
	}
}

// checkNetworkPolicies: the server's admits its port only; the agents'
// admits the server pods only.
func checkNetworkPolicies(t *testing.T, objs map[string]Object) {
	t.Helper()
	d := get[*appsv1.Deployment](t, objs, "Deployment/platformapi")
	ds := get[*appsv1.DaemonSet](t, objs, "DaemonSet/platformapi-node-agent")
	np := get[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy/platformapi")
	if !selects(t, &np.Spec.PodSelector, d.Spec.Template.Labels) || len(np.Spec.Ingress) != 1 ||
		np.Spec.Ingress[0].Ports[0].Port.String() != "http" {
		t.Errorf("server NetworkPolicy %+v", np.Spec)
	}
	ap := get[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy/platformapi-node-agent")
	if !selects(t, &ap.Spec.PodSelector, ds.Spec.Template.Labels) || len(ap.Spec.Ingress) != 1 ||
		len(ap.Spec.Ingress[0].From) != 1 || !selects(t, ap.Spec.Ingress[0].From[0].PodSelector, d.Spec.Template.Labels) ||
		selects(t, ap.Spec.Ingress[0].From[0].PodSelector, ds.Spec.Template.Labels) {
		t.Errorf("node agent NetworkPolicy %+v: want the server pods only", ap.Spec)
	}
}

// checkSecretReadable: the pod's user can read the files of the Secret
// volume v. Kubernetes writes them owned by root, in group fsGroup (root
// without one), with v's mode: a non-root user reads them through the
// group only with fsGroup, else only when the mode lets others read.
func checkSecretReadable(t *testing.T, spec corev1.PodSpec, v corev1.Volume) {
	t.Helper()
	mode := int32(0o644)
	if v.Secret != nil && v.Secret.DefaultMode != nil {
		mode = *v.Secret.DefaultMode
	}
	var fsGroup int64
	if sc := spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		fsGroup = *sc.FSGroup
	}
	if !(fsGroup != 0 && mode&0o040 != 0) && mode&0o004 == 0 {
		t.Errorf("Secret volume %s: mode %#o, fsGroup %d: the non-root user cannot read its files",
			v.Name, mode, fsGroup)
	}
}

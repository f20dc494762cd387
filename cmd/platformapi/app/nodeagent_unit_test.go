package app

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

const systemdDir = "../../../deploy/systemd"

// readSettings reads the KEY=value lines of a unit or environment file,
// commented ones included when commented.
func readSettings(t *testing.T, name string, commented bool) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if commented {
			line = strings.TrimPrefix(line, "#")
		}
		if k, v, ok := strings.Cut(line, "="); ok && !strings.ContainsAny(k, " #[") {
			out[k] = append(out[k], v)
		}
	}
	return out
}

// TestNodeAgentUnit_SystemdVerifies_Sandboxed checks the unit with
// systemd-analyze verify (no error, no warning) and security (exposure at
// most 2.0), that it is sandboxed, and
// that its read-only and read-write paths are the roots its example
// environment file gives.
func TestNodeAgentUnit_SystemdVerifies_Sandboxed(t *testing.T) {
	unit := filepath.Join(systemdDir, "platformapi-node-agent.service")
	s := readSettings(t, unit, false)
	env := readSettings(t, filepath.Join(systemdDir, "node-agent.env.example"), false)
	want := map[string][]string{"NoNewPrivileges": {"yes"}, "ProtectSystem": {"strict"},
		"ReadOnlyPaths": env[nodeAgentEnv+"STORE_ROOT"], "ReadWritePaths": env[nodeAgentEnv+"CACHE_ROOT"],
		"EnvironmentFile": {"/etc/platformapi/node-agent.env"}, "CapabilityBoundingSet": {""},
		"ExecStart": {"/usr/local/bin/platformapi node-agent"}}
	got := map[string][]string{}
	for k := range want {
		got[k] = s[k]
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("unit settings (-want +got):\n%s", d)
	}
	verifyUnit(t, unit)
}

// TestNodeAgentUnit_EnvExample_EveryVariableIsAFlag checks every variable
// of the example environment file names a flag of node-agent.
func TestNodeAgentUnit_EnvExample_EveryVariableIsAFlag(t *testing.T) {
	cmd := nodeAgentCommand(&Options{})
	flags := map[string]bool{nodeAgentEnv + "LOG_LEVEL": true} // the root's --log-level
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		flags[nodeAgentEnv+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))] = true
	})
	for name := range readSettings(t, filepath.Join(systemdDir, "node-agent.env.example"), true) {
		if !flags[name] {
			t.Errorf("%s names no flag of node-agent", name)
		}
	}
}

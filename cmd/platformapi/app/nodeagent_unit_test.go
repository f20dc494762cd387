package app

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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

// installed is what one install(1) line of a unit's instructions makes.
type installed struct {
	dir   bool
	mode  os.FileMode
	group string // "": root's
}

// installSteps reads the `#   install …` lines of a unit's instructions:
// path → what they make there.
func installSteps(t *testing.T, unit string) map[string]installed {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]installed{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "#"))
		if len(f) == 0 || f[0] != "install" {
			continue
		}
		var in installed
		var args []string
		for i := 1; i < len(f) && f[i] != "#"; i++ {
			switch f[i] {
			case "-d":
				in.dir = true
			case "-m", "-g":
				if f[i] == "-g" {
					in.group = f[i+1]
				} else if m, err := strconv.ParseUint(f[i+1], 8, 32); err == nil {
					in.mode = os.FileMode(m)
				}
				i++
			default:
				args = append(args, f[i])
			}
		}
		out[args[len(args)-1]] = in
	}
	return out
}

// TestNodeAgentUnit_InstallSteps_AgentReadsItsKey: following the unit's
// install steps, the agent (the unit's User= and Group=, not root) can
// reach and read every file the steps put under /etc/platformapi that its
// environment file names (the node key) — a directory closed to its group
// made the agent refuse to start.
func TestNodeAgentUnit_InstallSteps_AgentReadsItsKey(t *testing.T) {
	unit := filepath.Join(systemdDir, "platformapi-node-agent.service")
	group := readSettings(t, unit, false)["Group"][0]
	steps := installSteps(t, unit)
	canRead := func(in installed, bit os.FileMode) bool { // bit: read 4 or search 1
		return in.group == group && in.mode&(bit<<3) != 0 || in.mode&bit != 0
	}
	checked := 0
	for name, vals := range readSettings(t, filepath.Join(systemdDir, "node-agent.env.example"), false) {
		file, ok := steps[vals[0]]
		if !ok || file.dir || !strings.HasPrefix(vals[0], "/etc/platformapi/") {
			continue
		}
		checked++
		for d := filepath.Dir(vals[0]); d != "/etc"; d = filepath.Dir(d) {
			if dir, ok := steps[d]; !ok || !canRead(dir, 1) {
				t.Errorf("%s (%s): directory %s is closed to group %s: %+v", name, vals[0], d, group, dir)
			}
		}
		if !canRead(file, 4) {
			t.Errorf("%s: %s is not readable by group %s: %+v", name, vals[0], group, file)
		}
	}
	if checked == 0 {
		t.Fatal("no file of the environment file is installed by the steps")
	}
}

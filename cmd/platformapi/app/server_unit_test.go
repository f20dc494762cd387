package app

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// verifyUnit runs systemd-analyze verify on the unit (no error, no warning)
// and systemd-analyze security offline (overall exposure at most 2.0 of
// 10), with this test binary standing in for ExecStart's binary, which
// verify wants to exist.
func verifyUnit(t *testing.T, unit string) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd); .ci/run installs it")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), filepath.Base(unit))
	mustWrite(t, copied, bytes.ReplaceAll(b, []byte("/usr/local/bin/platformapi"), []byte(self)))
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", copied).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command("systemd-analyze", "security", "--offline=yes", "--threshold=20", copied).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security (exposure above 2.0): %v\n%s", err, out)
	}
	t.Log(lastLine(out))
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// TestServerUnit_SystemdVerifies_Sandboxed checks the server's unit with
// systemd-analyze verify and security, that it runs `serve` as a dynamic
// user with its state directory as --data-dir, reads its environment file,
// and is sandboxed like the node agent.
func TestServerUnit_SystemdVerifies_Sandboxed(t *testing.T) {
	unit := filepath.Join(systemdDir, "platformapi.service")
	s := readSettings(t, unit, false)
	want := map[string][]string{"DynamicUser": {"yes"}, "StateDirectory": {"platformapi"},
		"EnvironmentFile": {"/etc/platformapi/platformapi.env"}, "NoNewPrivileges": {"yes"},
		"ProtectSystem": {"strict"}, "ProtectHome": {"yes"}, "PrivateTmp": {"yes"}, "CapabilityBoundingSet": {""},
		"RestrictAddressFamilies": {"AF_INET AF_INET6 AF_UNIX"},
		"SystemCallFilter":        {"@system-service", "~@privileged"},
		"ExecStart":               {"/usr/local/bin/platformapi serve --data-dir=%S/platformapi"}}
	got := map[string][]string{}
	for k := range want {
		got[k] = s[k]
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("unit settings (-want +got):\n%s", d)
	}
	verifyUnit(t, unit)
}

// TestServerUnit_EnvExample_SetsWhatExecStartUses_NamesDocumented checks
// the example environment file sets every variable ExecStart expands (an
// empty --addr would listen on every address) and names only variables the
// README's configuration documents.
func TestServerUnit_EnvExample_SetsWhatExecStartUses_NamesDocumented(t *testing.T) {
	env := readSettings(t, filepath.Join(systemdDir, "platformapi.env.example"), false)
	exec := readSettings(t, filepath.Join(systemdDir, "platformapi.service"), false)["ExecStart"][0]
	for _, m := range regexp.MustCompile(`\$\{(\w+)\}`).FindAllStringSubmatch(exec, -1) {
		if _, ok := env[m[1]]; !ok {
			t.Errorf("ExecStart expands ${%s}, which the example does not set", m[1])
		}
	}
	if len(env["PLATFORMAPI_ADDR"]) != 1 || env["PLATFORMAPI_ADDR"][0] == "" {
		t.Errorf("PLATFORMAPI_ADDR %q: want an address", env["PLATFORMAPI_ADDR"])
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range readSettings(t, filepath.Join(systemdDir, "platformapi.env.example"), true) {
		if !strings.Contains(exec, "${"+name+"}") && !bytes.Contains(readme, []byte("`"+name+"`")) {
			t.Errorf("%s is neither used by ExecStart nor documented in the README", name)
		}
	}
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
)

func TestVersion_CommandAndFlagFromBuildInfo(t *testing.T) {
	var out bytes.Buffer
	root := NewRootCommand(&out, io.Discard)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var b BuildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("version output: %v %s", err, out.String())
	}
	if b.GoVersion != runtime.Version() || b.Version == "" || b.API != "1.0.0" {
		t.Fatalf("version: %+v", b)
	}
	out.Reset()
	root = NewRootCommand(&out, io.Discard)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "platformapi "+b.Version) || !strings.Contains(got, runtime.Version()) {
		t.Fatalf("--version: %q", got)
	}
}

// TestServeLog_APIOff_SaysHowToTurnItOn: the start-up log names every
// address and, while the API is off, the command that turns it on.
func TestServeLog_APIOff_SaysHowToTurnItOn(t *testing.T) {
	c := newCLI(t)
	var logs bytes.Buffer
	m, err := Open(context.Background(), Options{DatabaseURL: c.dsn,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.logWhereServed(context.Background(), ServeOptions{MetricsAddr: "127.0.0.1:9100"}, "127.0.0.1:8080")
	text := logs.String()
	for _, want := range []string{`"docs":"http://127.0.0.1:8080/api/v1/docs"`, `"mcp":"http://127.0.0.1:8080/mcp"`,
		`"healthz":"http://127.0.0.1:8080/healthz"`, `"readyz":"http://127.0.0.1:8080/readyz"`,
		`"metrics":"http://127.0.0.1:9100/metrics"`, `"level":"WARN","msg":"the API is off`,
		`"enable_with":"platformapi portal api enable --as root@example.test"`} {
		if !strings.Contains(text, want) {
			t.Errorf("start-up log lacks %s:\n%s", want, text)
		}
	}
	c.ok("portal", "api", "enable", "--as", "root@example.test")
	logs.Reset()
	m.logWhereServed(context.Background(), ServeOptions{}, "127.0.0.1:8080")
	if strings.Contains(logs.String(), "the API is off") {
		t.Fatal("API on, yet the log says it is off")
	}
}

// Issue 18 (new user): serve --demo on a database of one's own without a
// token pepper failed after half-building the demo world, naming neither
// way to give a pepper. It now refuses before touching the database.
func TestServeDemo_ExternalDatabaseWithoutPepper_RefusedBeforeAnyChange(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "")
	dir := t.TempDir() // the default --data-dir (./.platformapi) is under it
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut)
	root.SetArgs([]string{"--database-url", dsn, "--log-level", "error", "serve", "--demo", "--addr", "127.0.0.1:0"})
	err := root.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--token-pepper-file") ||
		!strings.Contains(err.Error(), "PLATFORMAPI_TOKEN_PEPPER") {
		t.Fatalf("serve --demo without a pepper: %v", err)
	}
	db, err := bunstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows int // the test database is migrated already: nothing may be written into it
	if err := db.NewRaw("SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM audit_events) + "+
		"(SELECT count(*) FROM ai_nodes)").Scan(context.Background(), &rows); err != nil || rows != 0 {
		t.Fatalf("the database was changed: %d rows (%v)", rows, err)
	}
	if written, err := os.ReadDir(dir); err != nil || len(written) != 0 {
		t.Fatalf("files were written before the refusal: %v (%v)", written, err)
	}
}

// TestBuildInfoMetric_OneSeriesLabelledWithTheBuild: platformapi_build_info
// is 1 with the build's version, revision, API and platform versions.
func TestBuildInfoMetric_OneSeriesLabelledWithTheBuild(t *testing.T) {
	b := BuildInfo{Version: "v1.2.3", Revision: "abc123", API: "1.0.0", Platform: "2026.11"}
	reg := prometheus.NewRegistry()
	reg.MustRegister(buildInfoMetric(b))
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, %v", families, err)
	}
	m := families[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": "v1.2.3", "revision": "abc123", "api_version": "1.0.0",
		"platform_version": "2026.11"}
	if diff := cmp.Diff(want, labels); diff != "" || families[0].GetName() != "platformapi_build_info" ||
		m.GetGauge().GetValue() != 1 {
		t.Fatalf("%s = %v (-want +got labels):\n%s", families[0].GetName(), m.GetGauge().GetValue(), diff)
	}
}

// README walk: a pepper given but shorter than 16 characters (the variable,
// or a file) was taken for none: serve started, logged "no token pepper
// configured" and answered every authenticated request 503. It is now
// refused at start, naming where it came from.
func TestServe_PepperShorterThan16_RefusedAtStartNamingIt(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Chdir(t.TempDir())
	file := filepath.Join(t.TempDir(), "pepper")
	if err := os.WriteFile(file, []byte("too-short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env, want string
		args      []string
	}{
		{env: "too-short", want: "PLATFORMAPI_TOKEN_PEPPER"},
		{want: file, args: []string{"--token-pepper-file", file}},
	} {
		t.Setenv("PLATFORMAPI_TOKEN_PEPPER", c.env)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		root := NewRootCommand(io.Discard, io.Discard)
		args := append([]string{"--database-url", dsn, "--log-level", "error"}, c.args...)
		root.SetArgs(append(args, "serve", "--addr", "127.0.0.1:0"))
		err := root.ExecuteContext(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "16") {
			t.Errorf("pepper from %s: serve answered %v, want a refusal naming it", c.want, err)
		}
	}
}

package app

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// pgTool finds a PostgreSQL client program (pg_dump, pg_restore): on PATH
// or in Debian's /usr/lib/postgresql/*/bin. Missing: skipped, except under
// CI=true, where it fails.
func pgTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name); len(m) > 0 {
		return m[len(m)-1]
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing", name)
	}
	t.Skipf("%s is missing", name)
	return ""
}

// run runs a command and fails the test with its output when it fails.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// restoredStatuses serves the installation at dsn with pepper and answers
// the status of GET /api/v1/whoami with token and of the AI gateway's
// /ai-gateway/verify with the gateway key.
func restoredStatuses(t *testing.T, dsn, pepper, token, gatewayKey string) (whoami, verify int) {
	t.Helper()
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", pepper)
	m, err := Open(t.Context(), Options{DatabaseURL: dsn, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := m.prepare(t.Context(), ServeOptions{}, m.newRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	status := func(path, bearer string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	return status("/api/v1/whoami", token), status(resources.GatewayVerifyPath, gatewayKey)
}

// TestBackup_DumpRestoredIntoAFreshCluster_TokensLiveOnlyWithThePepper
// follows docs/operations.md: pg_dump of a live installation, pg_restore
// into a new, empty PostgreSQL cluster, the server started on it with the
// same pepper: the API token and the AI gateway key made before the backup
// both authenticate. With another pepper every API token is refused — the
// pepper must travel with the dump — while gateway keys still open.
func TestBackup_DumpRestoredIntoAFreshCluster_TokensLiveOnlyWithThePepper(t *testing.T) {
	dump, restore := pgTool(t, "pg_dump"), pgTool(t, "pg_restore")
	const pepper = "backup-test-pepper-0123456789"
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", pepper)
	source := pgtest.DSN(t)
	m, err := Open(t.Context(), Options{DatabaseURL: source, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Portal()
	if _, err := p.CreateUser(t.Context(), resources.Actor{}, resources.NewUser{Email: "root@example.test",
		DisplayName: "Root", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	root := resources.Actor{Label: "root@example.test"}
	if _, err := p.SetAPIEnabled(t.Context(), root, true); err != nil {
		t.Fatal(err)
	}
	minted, err := p.CreateToken(t.Context(), root, resources.NewToken{Name: "before the backup", Days: 30,
		Scopes: []string{resources.PermTenancyRead}})
	if err != nil {
		t.Fatal(err)
	}
	key, err := m.store.CreateGatewayKey(t.Context(), resources.Actor{Label: "ops:test"},
		resources.NewGatewayKey{Name: "before the backup"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	file := filepath.Join(t.TempDir(), "platformapi.dump")
	run(t, dump, "--format=custom", "--no-owner", "--file="+file, source)

	cluster, err := bunstore.StartEmbedded(t.Context(), t.TempDir(),
		slog.New(slog.NewTextHandler(io.Discard, nil)), bunstore.WithNoSync())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	target := cluster.DSN("postgres")
	run(t, restore, "--no-owner", "--exit-on-error", "--dbname="+target, file)

	if whoami, verify := restoredStatuses(t, target, pepper, minted.Value, key.Value); whoami != 200 || verify != 200 {
		t.Fatalf("the restored installation with its pepper: whoami %d, gateway verify %d", whoami, verify)
	}
	// The gateway key is hashed under a server key kept in the database: it
	// does not depend on the pepper.
	whoami, verify := restoredStatuses(t, target, "another-pepper-0123456789abc", minted.Value, key.Value)
	if whoami != http.StatusUnauthorized || verify != http.StatusOK {
		t.Fatalf("the restored installation with another pepper: whoami %d, gateway verify %d", whoami, verify)
	}
}

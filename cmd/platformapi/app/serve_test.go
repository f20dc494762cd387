package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"platformapi/resources/testkit"
)

// TestServeDemo_EmbeddedClusterAdminTokenAndCleanStop runs `serve --demo`
// with no DATABASE_URL: the private cluster is created from the system's
// PostgreSQL binaries, the printed admin token works, and a cancelled
// context stops the server and the cluster.
func TestServeDemo_EmbeddedClusterAdminTokenAndCleanStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "")
	dir := t.TempDir()
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := NewRootCommand(pw, io.Discard)
		root.SetArgs([]string{"serve", "--demo", "--addr", addr, "--data-dir", dir, "--metrics-addr", metricsAddr})
		done <- root.ExecuteContext(ctx)
		_ = pw.Close()
	}()
	var demo struct {
		Token string `json:"token"`
	}
	line, err := bufio.NewReader(pr).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &demo) != nil || demo.Token == "" {
		t.Fatalf("no demo line with a token: %v %q", err, line)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	who := waitWhoami(t, addr, demo.Token)
	if who["principal"].(map[string]any)["email"] != "admin@demo.example" {
		t.Fatalf("whoami: %v", who)
	}
	nodes := getJSON(t, addr, demo.Token, "/api/v1/ai/nodes")
	if items := nodes["items"].([]any); len(items) != 4 || nodes["monitoring_reachable"] != true {
		t.Fatalf("demo world nodes: %v", nodes)
	}
	if models := getJSON(t, addr, demo.Token, "/api/v1/ai/models")["items"].([]any); len(models) != 6 {
		t.Fatalf("demo world models: %d", len(models))
	}
	if customers := getJSON(t, addr, demo.Token, "/api/v1/customers?status=suspended")["items"].([]any); len(customers) != 2 {
		t.Fatalf("demo world suspended customers: %v", customers)
	}
	if l := getJSON(t, addr, demo.Token, "/api/v1/licence"); l["state"] != "valid" || l["edition"] != "demo" ||
		l["serial"] != "DEMO-0000-0000-0001" {
		t.Fatalf("demo licence: %v", l)
	}
	checkOperability(t, addr, metricsAddr)
	if _, err := os.Stat(filepath.Join(dir, "token-pepper")); err != nil {
		t.Fatalf("pepper not generated into the data dir: %v", err)
	}
	// A portal command beside the running server uses its cluster and pepper.
	var out bytes.Buffer
	portal := NewRootCommand(&out, io.Discard)
	portal.SetArgs([]string{"--data-dir", dir, "portal", "token", "create", "--as", "admin@demo.example",
		"--name", "second", "--scopes", "audit-read-global"})
	if err := portal.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("portal beside serve: %v", err)
	}
	var minted struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(out.Bytes(), &minted)
	if waitWhoami(t, addr, minted.Token)["scopes"].([]any)[0] != "audit-read-global" {
		t.Fatal("token minted beside the server does not work")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(filepath.Join(dir, "pgdata", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("cluster still running: %v", err)
	}
}

// checkOperability: the probes answer on the API's listener, the metrics
// (API, pool, jobs) on their own.
func checkOperability(t *testing.T, addr, metricsAddr string) {
	t.Helper()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 404} {
		if got := statusOf(t, "http://"+addr+path); got != want {
			t.Errorf("GET %s: %d, want %d", path, got, want)
		}
	}
	for _, url := range []string{"http://" + addr + "/healthz", "http://" + metricsAddr + "/metrics"} {
		// net/http reads up to 4 KiB past the limit before it refuses
		if got := headersOf(t, url, maxHeaderBytes+8<<10); got != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("GET %s with headers over %d bytes: %d, want 431", url, maxHeaderBytes, got)
		}
		if got := headersOf(t, url, 32<<10); got != http.StatusOK { // large cookies and tokens: served
			t.Errorf("GET %s with 32 KiB of headers: %d, want 200", url, got)
		}
	}
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{`platformapi_http_requests_total{operation="get-whoami",status="200"}`,
		`go_sql_max_open_connections{db_name="platformapi"}`, "platformapi_rate_limit_refusals_total", "go_build_info"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// headersOf is the status of a GET of url sending n bytes of headers.
func headersOf(t *testing.T, url string, n int) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Pad", strings.Repeat("a", n))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return res.StatusCode
}

func statusOf(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitWhoami(t *testing.T, addr, token string) map[string]any {
	t.Helper()
	var m map[string]any
	testkit.Eventually(t, 30*time.Second, "the server answers whoami", func() bool {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || json.Unmarshal(body, &m) != nil {
			t.Fatalf("whoami status %d: %s", res.StatusCode, body)
		}
		return true
	})
	return m
}

func getJSON(t *testing.T, addr, token, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&m) != nil {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	return m
}

// TestApplyGCDefault_OnlyWithoutGOGC: serve sets the collector's target to
// defaultGCPercent unless the operator set GOGC.
func TestApplyGCDefault_OnlyWithoutGOGC(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100) })
	for _, tc := range []struct {
		gogc string
		want int
	}{{"", defaultGCPercent}, {"50", 100}, {"off", 100}} {
		debug.SetGCPercent(100)
		applyGCDefault(func(name string) string {
			if name == "GOGC" {
				return tc.gogc
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.gogc, got, tc.want)
		}
	}
}

package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/sharedcache/redistest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// nginxTemplate is the gateway example operators install; the test runs
// that very file.
const nginxTemplate = "../../../deploy/nginx/ai-gateway.conf.template"

// TestGatewayNginx_ForwardAuthAcrossReplicas puts real nginx (auth_request,
// deploy/nginx) in front of an OpenAI-compatible upstream, asking replica A,
// while keys are created, rotated and revoked through replica B: a live key
// reaches the upstream with its id, name and tier; unknown, rotated-away
// and revoked values get 401 at nginx, each within a second of the change,
// over the PostgreSQL and the Redis change feed.
func TestGatewayNginx_ForwardAuthAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs two replicas and nginx")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if nginx, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (apt-get install nginx-light); CI installs it")
		}
	}
	bin := buildServer(t)
	for _, feed := range []struct {
		name  string
		redis bool
		ready string
	}{
		{"PostgreSQL feed", false, "change feed (PostgreSQL) listening"},
		{"Redis feed", true, "shared cache (Redis) reachable"},
	} {
		t.Run(feed.name, func(t *testing.T) {
			redisURL := ""
			if feed.redis {
				redisURL = redistest.Start(t).URL()
			}
			c := newCLI(t)
			c.ok("portal", "api", "enable", "--as", "root@example.test")
			a, b := startReplica(t, bin, c.dsn, redisURL), startReplica(t, bin, c.dsn, redisURL)
			a.waitLog(t, feed.ready, 1)
			b.waitLog(t, feed.ready, 1)
			up := newUpstream(t)
			g := startNginx(t, nginx, a.addr, up.addr())
			keysThroughReplica(t, c, b, g, up)
		})
	}
}

// keysThroughReplica changes keys through replica b and checks what the
// gateway g (asking another replica) lets through to the upstream up.
func keysThroughReplica(t *testing.T, c *cli, b *replica, g *gateway, up *upstream) {
	m := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "gw", "--scopes",
		resources.PermAIGatewayKeys, "--allow-destroy")
	admin := apiClient{addr: b.addr, token: m["token"].(string)}
	key := admin.call(t, "POST", "/ai/gateway/keys", `{"name":"ci runner","tier":"pro","return_value":true}`, 201)
	id, value := key["id"].(string), key["value"].(string)
	g.within(t, value, 200, time.Second)
	want := map[string]string{"X-Gateway-Key-Id": id, "X-Gateway-Key-Name": "ci runner", "X-Gateway-Tier": "pro",
		"Authorization": ""}
	if diff := cmp.Diff(want, up.last()); diff != "" {
		t.Fatalf("what the upstream saw (-want +got):\n%s", diff)
	}
	plain := admin.call(t, "POST", "/ai/gateway/keys", `{"name":"no tier","return_value":true}`, 201)
	g.within(t, plain["value"].(string), 200, time.Second)
	if tier := up.last()["X-Gateway-Tier"]; tier != "" {
		t.Fatalf("a key without tier reached the upstream with tier %q (the client's header passed)", tier)
	}
	reached := up.count()
	g.refused(t, resources.NewGatewayKeyValue(), resources.CodeGatewayKeyInvalid)
	g.refused(t, "", resources.CodeGatewayKeyRequired)
	if up.count() != reached {
		t.Fatal("a refused request reached the upstream")
	}
	fresh := admin.call(t, "POST", "/ai/gateway/keys/"+id+"/rotate", `{"return_value":true}`, 200)["value"].(string)
	start := time.Now()
	g.within(t, value, 401, time.Second)
	g.within(t, fresh, 200, time.Second)
	t.Logf("rotated away through the other replica: refused at the gateway after %v", time.Since(start))
	g.refused(t, value, resources.CodeGatewayKeyInvalid)
	admin.call(t, "DELETE", "/ai/gateway/keys/"+id, "", 204)
	start = time.Now()
	g.within(t, fresh, 401, time.Second)
	t.Logf("revoked through the other replica: refused at the gateway after %v", time.Since(start))
	g.refused(t, fresh, resources.CodeGatewayKeyInvalid)
}

// apiClient calls one replica's /api/v1 with a token.
type apiClient struct{ addr, token string }

func (a apiClient) call(t *testing.T, method, path, body string, status int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+a.addr+"/api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// upstream is a small OpenAI-compatible server that records the gateway
// headers of each request it receives.
type upstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []map[string]string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := map[string]string{}
		for _, name := range []string{"X-Gateway-Key-Id", "X-Gateway-Key-Name", "X-Gateway-Tier", "Authorization"} {
			h[name] = r.Header.Get(name)
		}
		u.mu.Lock()
		u.seen = append(u.seen, h)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"coder",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) addr() string { return strings.TrimPrefix(u.srv.URL, "http://") }

func (u *upstream) count() int { u.mu.Lock(); defer u.mu.Unlock(); return len(u.seen) }

func (u *upstream) last() map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen[len(u.seen)-1]
}

// gateway is a running nginx with deploy/nginx's configuration.
type gateway struct{ addr string }

// startNginx renders the template with free ports (as envsubst would: only
// the three ${…} names), wraps it in a minimal main configuration under a
// temporary prefix and runs nginx in the foreground until the test ends.
func startNginx(t *testing.T, nginx, verify, upstreamAddr string) *gateway {
	t.Helper()
	tmpl, err := os.ReadFile(nginxTemplate)
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{addr: freeAddr(t)}
	site := strings.NewReplacer("${GATEWAY_LISTEN}", g.addr, "${PLATFORMAPI_VERIFY}", verify,
		"${AI_UPSTREAM}", upstreamAddr).Replace(string(tmpl))
	if strings.Contains(site, "${") {
		t.Fatal("the template names a variable the test does not set")
	}
	dir := t.TempDir()
	main := "daemon off;\nworker_processes 1;\npid " + dir + "/nginx.pid;\nerror_log " + dir + "/error.log info;\n" +
		"events { worker_connections 256; }\nhttp {\n  access_log " + dir + "/access.log;\n"
	for _, temp := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		main += "  " + temp + "_temp_path " + filepath.Join(dir, temp) + ";\n"
	}
	main += "  include " + filepath.Join(dir, "ai-gateway.conf") + ";\n}\n"
	for name, text := range map[string]string{"ai-gateway.conf": site, "nginx.conf": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runNginx(t, nginx, dir)
	g.waitUp(t)
	return g
}

func runNginx(t *testing.T, nginx, dir string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx output:\n%s\nerror log:\n%s", out.String(), log)
		}
	})
}

// waitUp waits (at most 10 s) until nginx answers.
func (g *gateway) waitUp(t *testing.T) {
	t.Helper()
	testkit.Eventually(t, 0, "nginx answers", func() bool {
		res, err := http.Get("http://" + g.addr + "/")
		if err == nil {
			_ = res.Body.Close()
		}
		return err == nil
	})
}

// chat sends a chat completion with key (none when "") and a spoofed tier
// header, returning the status, the body and the WWW-Authenticate headers.
func (g *gateway) chat(t *testing.T, key string) (int, []byte, []string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+g.addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"coder","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gateway-Tier", "spoofed")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw, res.Header.Values("WWW-Authenticate")
}

// within polls until key gets status at the gateway, failing after d.
func (g *gateway) within(t *testing.T, key string, status int, d time.Duration) {
	t.Helper()
	testkit.Eventually(t, d, fmt.Sprintf("the gateway answers the key %d", status), func() bool {
		got, _, _ := g.chat(t, key)
		return got == status
	})

}

// refused checks the gateway answers key with platformapi's 401 problem
// and one Bearer challenge.
func (g *gateway) refused(t *testing.T, key, code string) {
	t.Helper()
	status, body, challenges := g.chat(t, key)
	var p struct{ Code, Type string }
	if err := json.Unmarshal(body, &p); err != nil || status != 401 || p.Code != code ||
		len(challenges) != 1 || !strings.HasPrefix(challenges[0], "Bearer") {
		t.Fatalf("gateway: %d %q (WWW-Authenticate %q), want 401 %s with one challenge",
			status, body, challenges, code)
	}
}

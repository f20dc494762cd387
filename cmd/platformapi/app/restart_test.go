package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// TestServe_KilledWhileProvisioning_OperationFinishesOnceAfterRestart runs
// the real binary, kills it (SIGKILL) while a provisioning operation runs,
// starts it again, and checks the operation then succeeds exactly once.
func TestServe_KilledWhileProvisioning_OperationFinishesOnceAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server twice")
	}
	c := newCLI(t)
	c.ok("portal", "api", "enable", "--as", "root@example.test")
	tok := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "k",
		"--scopes", "tenancy-write-global,projects-write-global,projects-read-global")["token"].(string)
	bin := buildServer(t)
	addr := freeAddr(t)
	// The first server would provision for a minute; it dies long before.
	first := startServer(t, bin, c.dsn, addr, "--provision-delay", "60s", "--job-timeout", "2m", "--job-rescue-after", "2m")
	api := &client{t: t, base: "http://" + addr + "/api/v1", token: tok}
	cust := api.call("POST", "/customers", `{"short_name":"ACME","long_name":"Acme Corp","vcs_group":"acme",
		"primary_contact_email":"a@acme.example","primary_contact_name":"Jane Doe"}`, 201)
	op := api.call("POST", "/projects", `{"customer_id":"`+cust["id"].(string)+`","short_name":"SHOP","name":"Web shop",
		"kind":"cluster","components":["www"]}`, 202)
	opPath := "/operations/" + op["id"].(string)
	api.waitStatus(opPath, "running", 30*time.Second)
	_ = first.Process.Kill() // no shutdown: the job is left running in the queue
	_, _ = first.Process.Wait()
	// The second finds the job stuck with its dead server (older than its
	// --job-rescue-after at one of its rescuer's rounds) and runs it again.
	startServer(t, bin, c.dsn, addr, "--provision-delay", "200ms", "--job-timeout", "3s", "--job-rescue-after", "3s")
	api.waitStatus(opPath, "succeeded", 90*time.Second)
	if p := api.call("GET", "/projects/1", "", 200); p["status"] != "active" {
		t.Fatalf("project: %v", p)
	}
	provisioned := c.count("SELECT count(*) FROM audit_events WHERE action = 'project.provision'")
	if provisioned != 1 {
		t.Fatalf("provisioning applied %d times", provisioned)
	}
}

func startServer(t *testing.T, bin, dsn, addr string, flags ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--database-url", dsn, "--log-level", "warn", "serve", "--addr", addr}, flags...)...)
	cmd.Env = append(os.Environ(), "PLATFORMAPI_TOKEN_PEPPER=cli-test-pepper-0123456789")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	testkit.Eventually(t, 30*time.Second, "the server answers", func() bool {
		res, err := http.Get("http://" + addr + "/api/v1/meta")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	return cmd
}

type client struct {
	t           *testing.T
	base, token string
}

func (c *client) call(method, path, body string, want int) map[string]any {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, m)
	}
	return m
}

func (c *client) waitStatus(path, status string, within time.Duration) {
	c.t.Helper()
	testkit.Eventually(c.t, within, path+" is "+status, func() bool {
		return c.call("GET", path, "", 200)["status"] == status
	})
}

// TestServe_KilledWhileCopying_CopyFinishesAfterRestartWithoutCopyingAgain
// runs the real server binary against a real (throttled) node agent, kills
// the server (SIGKILL) while a copy runs, starts it again and checks that
// the operation then succeeds once, with every byte read from the store
// once: the new server joined the agent's copy instead of starting over.
func TestServe_KilledWhileCopying_CopyFinishesAfterRestartWithoutCopyingAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server twice")
	}
	c := newCLI(t)
	c.ok("portal", "api", "enable", "--as", "root@example.test")
	tok := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "k",
		"--scopes", "ai-write-global,ai-read-global")["token"].(string)
	agent, total := startInProcessAgent(t, c, 64<<10)
	var model int64
	c.query("INSERT INTO ai_models (repo, display_name, status, location, nas_volume, nas_path) "+
		"VALUES ('org/model', 'model', 'owned', 'nas', 'models', '/models/org/model') RETURNING id", &model)
	bin, addr := buildServer(t), freeAddr(t)
	first := startServer(t, bin, c.dsn, addr, "--job-timeout", "2m", "--job-rescue-after", "2m")
	api := &client{t: t, base: "http://" + addr + "/api/v1", token: tok}
	op := api.call("PUT", fmt.Sprintf("/node-caches/gpu-01/%d", model), "", 202)
	opPath := "/operations/" + op["id"].(string)
	api.waitStatus(opPath, "running", 30*time.Second)
	_ = first.Process.Kill() // the job is left running in the queue, the agent goes on copying
	_, _ = first.Process.Wait()
	startServer(t, bin, c.dsn, addr, "--job-timeout", "3s", "--job-rescue-after", "3s")
	api.waitStatus(opPath, "succeeded", 90*time.Second)
	caches := api.call("GET", "/node-caches?hostname=gpu-01", "", 200)["items"].([]any)
	if len(caches) != 1 || caches[0].(map[string]any)["status"] != "ready" {
		t.Fatalf("caches: %v", caches)
	}
	if read := agent.BytesRead(); read != total {
		t.Fatalf("the agent read %d bytes from the store for a %d-byte model", read, total)
	}
	ready := c.count("SELECT count(*) FROM audit_events WHERE action = 'node_cache.ready'")
	if ready != 1 {
		t.Fatalf("the copy was recorded %d times", ready)
	}
}

// startInProcessAgent enrols gpu-01 with a real node agent served in
// this process (throttled to bytesPerSecond) over a store holding the
// central copy of org/model; it answers the agent and the model's size.
func startInProcessAgent(t *testing.T, c *cli, bytesPerSecond int64) (*nodeagent.Agent, int64) {
	t.Helper()
	store := t.TempDir()
	files := map[string][]byte{"config.json": []byte(`{}`), "model.safetensors": bytes.Repeat([]byte("w"), 256<<10)}
	if err := nodeagent.WriteCentralCopy(store, "models/org/model", files); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.ok("portal", "inventory", "import", inventoryFile(t, "a.yaml",
		"nodes:\n- {hostname: gpu-01, agent_url: 'http://"+ln.Addr().String()+"'}\n"))
	key := c.ok("portal", "node-key", "gpu-01", "--as", "root@example.test")["node_key"].(string)
	a, err := nodeagent.New(nodeagent.Config{StoreRoot: store, CacheRoot: t.TempDir(), Key: key,
		MaxBytesPerSecond: bytesPerSecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); _ = a.Close() })
	return a, int64(len(files["config.json"]) + len(files["model.safetensors"]))
}

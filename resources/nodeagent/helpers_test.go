package nodeagent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// testAgent is an agent served over real HTTP on loopback, with its roots,
// its key file and a client.
type testAgent struct {
	t      *testing.T
	a      *Agent
	srv    *httptest.Server
	cfg    Config
	ep     resources.AgentEndpoint
	client *Client
	logs   *testkit.LockedBuffer
}

// newKey draws a fresh node key.
func newKey(t *testing.T) string {
	t.Helper()
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	return resources.DeriveNodeKey(resources.Pepper("test-pepper"), "gpu-1", nonce)
}

// newConfig makes a store root, a cache root and a key file under one
// temporary directory (which also holds "outside", a directory in neither).
func newConfig(t *testing.T) Config {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{"store", "cache", "outside"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keyFile := filepath.Join(base, "node.key")
	writeFile(t, keyFile, newKey(t)+"\n")
	return Config{StoreRoot: filepath.Join(base, "store"), CacheRoot: filepath.Join(base, "cache"),
		KeyFile: keyFile}
}

// outside is the directory beside the roots that no agent may touch.
func outside(cfg Config) string { return filepath.Join(filepath.Dir(cfg.StoreRoot), "outside") }

// startAgent starts an agent over cfg, served on loopback until the test ends.
func startAgent(t *testing.T, cfg Config) *testAgent {
	t.Helper()
	ta := &testAgent{t: t, cfg: cfg, logs: &testkit.LockedBuffer{}}
	cfg.Logger = slog.New(slog.NewJSONHandler(ta.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ta.a, ta.srv = a, httptest.NewServer(a.Handler())
	t.Cleanup(func() { ta.stop() })
	key, err := os.ReadFile(cfg.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ta.ep = resources.AgentEndpoint{Hostname: "gpu-1", URL: ta.srv.URL,
		Key: strings.TrimSpace(string(key))}
	ta.client = NewClient(nil)
	return ta
}

// stop shuts the server and the agent down (again is harmless).
func (ta *testAgent) stop() {
	ta.srv.Close()
	if err := ta.a.Close(); err != nil {
		ta.t.Errorf("Close: %v", err)
	}
	if ta.t.Failed() {
		ta.t.Logf("agent log:\n%s", ta.logs.String())
	}
}

// do sends one request with the agent's key and answers the status and body.
func (ta *testAgent) do(method, path, body string) (int, []byte) {
	ta.t.Helper()
	return ta.doKey(method, path, body, ta.ep.Key)
}

func (ta *testAgent) doKey(method, path, body, key string) (int, []byte) {
	ta.t.Helper()
	req, _ := http.NewRequest(method, ta.srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		ta.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// put asks for a copy and checks the status.
func (ta *testAgent) put(repo, source string, want int) resources.AgentCache {
	ta.t.Helper()
	status, b := ta.do("PUT", PathCaches+repo, `{"source":"`+source+`"}`)
	if status != want {
		ta.t.Fatalf("PUT %s: %d %s, want %d", repo, status, b, want)
	}
	var c resources.AgentCache
	if err := json.Unmarshal(b, &c); err != nil {
		ta.t.Fatalf("PUT %s: %v in %s", repo, err, b)
	}
	return c
}

// cache reads repo's cache through the client (nil: none).
func (ta *testAgent) cache(repo string) *resources.AgentCache {
	ta.t.Helper()
	c, err := ta.client.Cache(context.Background(), ta.ep, repo)
	if err != nil {
		ta.t.Fatalf("Cache %s: %v", repo, err)
	}
	return c
}

// waitState polls repo's cache until it is in state.
func (ta *testAgent) waitState(repo, state string) resources.AgentCache {
	ta.t.Helper()
	var c *resources.AgentCache
	testkit.Eventually(ta.t, 30*time.Second, repo+" "+state, func() bool {
		c = ta.cache(repo)
		return c != nil && c.State == state
	})
	return *c
}

// writeModel writes a central copy at store/source with files and its
// SHA256SUMS, made by sha256sum itself when it is installed.
func writeModel(t *testing.T, store, source string, files map[string][]byte) {
	t.Helper()
	dir := filepath.Join(store, source)
	var names []string
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), string(data))
		names = append(names, name)
	}
	slices.Sort(names)
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", names...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sha256sum: %v", err)
		}
		writeFile(t, filepath.Join(dir, resources.CentralManifestName), string(out))
		return
	}
	var sums strings.Builder
	for _, n := range names {
		fmt.Fprintf(&sums, "%s  %s\n", digest(files[n]), n)
	}
	writeFile(t, filepath.Join(dir, resources.CentralManifestName), sums.String())
}

// manifestFiles reads the files a central copy's SHA256SUMS lists, as the
// agent should report them once ready.
func manifestFiles(t *testing.T, store, source string) []resources.AgentFile {
	t.Helper()
	dir := filepath.Join(store, source)
	b, err := os.ReadFile(filepath.Join(dir, resources.CentralManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var out []resources.AgentFile
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resources.AgentFile{Path: name, SizeBytes: fi.Size(), SHA256: sum})
	}
	slices.SortFunc(out, func(a, b resources.AgentFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// randomBytes is n bytes of noise.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree describes everything under dir (links not followed): each path
// with its kind, size and, for files, digest; for links, the target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %d %s", len(b), digest(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// problem decodes a problem document.
func problem(t *testing.T, b []byte) Problem {
	t.Helper()
	var p Problem
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("not a problem document: %s", b)
	}
	return p
}

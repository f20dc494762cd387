package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// agentDirs are a node agent's roots and key file under one temporary
// directory, with a central copy of acme/llama in the store: a.bin
// (256 KiB) and big.bin (4 MiB).
type agentDirs struct {
	store, cache, keyFile, key string
}

func newAgentDirs(t *testing.T) agentDirs {
	t.Helper()
	base := t.TempDir()
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	d := agentDirs{store: filepath.Join(base, "store"), cache: filepath.Join(base, "cache"),
		keyFile: filepath.Join(base, "node.key")}
	d.key = resources.DeriveNodeKey(resources.Pepper("p"), "gpu-1", nonce)
	model := filepath.Join(d.store, "models", "acme", "llama")
	var sums strings.Builder
	for name, size := range map[string]int{"a.bin": 256 << 10, "big.bin": 4 << 20} {
		data := make([]byte, size)
		_, _ = rand.Read(data)
		mustWrite(t, filepath.Join(model, name), data)
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	mustWrite(t, filepath.Join(model, resources.CentralManifestName), []byte(sums.String()))
	mustWrite(t, d.keyFile, []byte(d.key+"\n"))
	if err := os.Mkdir(d.cache, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustWrite(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// agentProcess is a `platformapi node-agent` process with its log.
type agentProcess struct {
	cmd  *exec.Cmd
	addr string
	key  string
	log  *testkit.LockedBuffer
}

// startAgentProcess runs the binary as a node agent with env added to its
// environment and flags, and waits until it serves.
func startAgentProcess(t *testing.T, bin string, d agentDirs, env []string, flags ...string) *agentProcess {
	t.Helper()
	p := &agentProcess{addr: freeAddr(t), key: d.key, log: &testkit.LockedBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"node-agent", "--addr", p.addr}, flags...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_, _ = p.cmd.Process.Wait()
		if t.Failed() {
			t.Logf("agent %s log:\n%s", p.addr, p.log.String())
		}
	})
	testkit.Eventually(t, 30*time.Second, "the agent serves", func() bool {
		return strings.Contains(p.log.String(), `"msg":"node agent serving"`)
	})
	return p
}

// call sends one request with the node key and decodes a cache answer.
func (p *agentProcess) call(t *testing.T, method, path, body string, want int) resources.AgentCache {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, "http://"+p.addr+path,
		strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+p.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c resources.AgentCache
	var raw bytes.Buffer
	_ = json.NewDecoder(io.TeeReader(res.Body, &raw)).Decode(&c)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, raw.String(), want)
	}
	return c
}

// inodeAndMTime identify a file's one writing.
func inodeAndMTime(t *testing.T, name string) [2]int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return [2]int64{int64(fi.Sys().(*syscall.Stat_t).Ino), fi.ModTime().UnixNano()}
}

// TestNodeAgent_KilledMidCopy_ResumesAfterRestartWithoutRecopying runs the
// real binary: a throttled copy is killed (SIGKILL) once its first file is
// journaled; a new agent (configured through the environment this time)
// over the same directories finishes it without writing that file again.
func TestNodeAgent_KilledMidCopy_ResumesAfterRestartWithoutRecopying(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary twice")
	}
	bin, d := buildServer(t), newAgentDirs(t)
	first := startAgentProcess(t, bin, d, nil, "--store-root", d.store, "--cache-root", d.cache,
		"--key-file", d.keyFile, "--max-copy-bytes-per-second", "524288")
	path, put := nodeagent.PathCaches+"acme/llama", `{"source":"models/acme/llama"}`
	// net/http reads up to 4 KiB past the limit before it refuses
	if got := headersOf(t, "http://"+first.addr+path, maxHeaderBytes+8<<10); got != 431 {
		t.Fatalf("GET with headers over %d bytes: %d, want 431", maxHeaderBytes, got)
	}
	if got := headersOf(t, "http://"+first.addr+path, 32<<10); got != 401 { // read, then refused: no key
		t.Fatalf("GET with 32 KiB of headers (no key): %d, want 401", got)
	}
	first.call(t, "PUT", path, put, 202)
	testkit.Eventually(t, 30*time.Second, "a.bin journaled", func() bool {
		return len(first.call(t, "GET", path, "", 200).Files) > 0
	})
	_ = first.cmd.Process.Kill()
	_, _ = first.cmd.Process.Wait()
	journaled := filepath.Join(d.cache, ".partial", "acme", "llama", "a.bin")
	before := inodeAndMTime(t, journaled)

	env := []string{nodeAgentEnv + "STORE_ROOT=" + d.store, nodeAgentEnv + "CACHE_ROOT=" + d.cache,
		nodeAgentEnv + "KEY_FILE=" + d.keyFile}
	second := startAgentProcess(t, bin, d, env)
	if c := second.call(t, "GET", path, "", 200); c.State != resources.AgentCacheCopying || len(c.Files) != 1 {
		t.Fatalf("the killed copy as the new agent sees it: %+v", c)
	}
	second.call(t, "PUT", path, put, 202)
	var ready resources.AgentCache
	testkit.Eventually(t, 30*time.Second, "ready", func() bool {
		ready = second.call(t, "GET", path, "", 200)
		return ready.State == resources.AgentCacheReady
	})
	if d := cmp.Diff(before, inodeAndMTime(t, filepath.Join(ready.Path, "a.bin"))); d != "" {
		t.Fatalf("a.bin was written again (-before +after):\n%s", d)
	}
	if !strings.Contains(second.log.String(), `"files_to_copy":1,"files_verified_before":1`) {
		t.Fatalf("the resumed copy did not skip the journaled file:\n%s", second.log.String())
	}
	_ = second.cmd.Process.Signal(syscall.SIGTERM)
	if err := second.cmd.Wait(); err != nil || !strings.Contains(second.log.String(), "node agent stopped") {
		t.Fatalf("SIGTERM: %v\n%s", err, second.log.String())
	}
}

// TestNodeAgent_FlagsAndEnvironment_FlagWinsBadValueRefused starts the
// command in-process with roots that cannot serve, so it stops at once
// and its error shows which value it used.
func TestNodeAgent_FlagsAndEnvironment_FlagWinsBadValueRefused(t *testing.T) {
	d := newAgentDirs(t)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		says string
		not  string
	}{
		{"flag wins over the environment", map[string]string{"STORE_ROOT": d.store,
			"CACHE_ROOT": d.cache + "-gone", "KEY_FILE": d.keyFile + "-gone"}, []string{"--cache-root", d.cache},
			"node key file", "cache root"},
		{"environment used without the flag", map[string]string{"STORE_ROOT": d.store,
			"CACHE_ROOT": d.cache + "-gone", "KEY_FILE": d.keyFile}, nil, "cache root " + d.cache + "-gone", "store root"},
		{"a number that is not one", map[string]string{"MAX_COPIES": "two"}, nil,
			nodeAgentEnv + "MAX_COPIES", "root"},
		{"half a TLS pair", map[string]string{"STORE_ROOT": d.store, "CACHE_ROOT": d.cache,
			"KEY_FILE": d.keyFile}, []string{"--tls-cert-file", d.keyFile}, "go together", "root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(nodeAgentEnv+k, v)
			}
			var out, errOut bytes.Buffer
			root := NewRootCommand(&out, &errOut)
			root.SetArgs(append([]string{"node-agent", "--addr", "127.0.0.1:0"}, tc.args...))
			err := root.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), tc.not) {
				t.Fatalf("err %v, want one saying %q and not %q", err, tc.says, tc.not)
			}
		})
	}
}

package nodeagent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/resources/testkit"
)

func TestAuth_MissingWrongOrRotatedAwayKey_401(t *testing.T) {
	cfg := newConfig(t)
	ta := startAgent(t, cfg)
	old := ta.ep.Key
	if status, b := ta.doKey("GET", PathHealth, "", ""); status != 200 {
		t.Fatalf("healthz without a key: %d %s", status, b)
	}
	if status, b := ta.do("GET", PathStatus, ""); status != 200 {
		t.Fatalf("status with the key: %d %s", status, b)
	}
	rotated := newKey(t)
	writeFile(t, cfg.KeyFile, rotated+"\n")
	testkit.Eventually(t, 5*time.Second, "the rotated key accepted", func() bool {
		status, _ := ta.doKey("GET", PathStatus, "", rotated)
		return status == 200
	})
	for name, key := range map[string]string{"missing": "", "wrong": newKey(t), "rotated away": old,
		"not a node key": "svc_pat_x"} {
		for _, path := range []string{PathStatus, PathCaches + "acme/llama", "/v1/nope"} {
			status, b := ta.doKey("GET", path, "", key)
			if p := problem(t, b); status != 401 || p.Code != CodeNodeKeyInvalid {
				t.Fatalf("%s key on %s: %d %s", name, path, status, b)
			}
		}
	}
	if logs := ta.logs.String(); strings.Contains(logs, old) || strings.Contains(logs, rotated) {
		t.Fatalf("a key is in the log:\n%s", logs)
	}
	// A key file emptied by mistake refuses every request (fails closed).
	writeFile(t, cfg.KeyFile, "\n")
	testkit.Eventually(t, 5*time.Second, "the emptied key file refusing", func() bool {
		status, _ := ta.doKey("GET", PathStatus, "", rotated)
		return status == 401
	})
}

func TestNew_BadRootsOrKey_Refused(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		says   string
	}{
		{"store root missing", func(c *Config) { c.StoreRoot += "-gone" }, "store root"},
		{"cache root missing", func(c *Config) { c.CacheRoot += "-gone" }, "cache root"},
		{"no cache root", func(c *Config) { c.CacheRoot = "" }, "no cache root"},
		{"cache root is a file", func(c *Config) { c.CacheRoot = c.KeyFile }, "not a directory"},
		{"cache root inside the store", func(c *Config) {
			c.CacheRoot = filepath.Join(c.StoreRoot, "cache")
			_ = os.Mkdir(c.CacheRoot, 0o755)
		}, "one inside"},
		{"store root inside the cache", func(c *Config) {
			c.StoreRoot = filepath.Join(c.CacheRoot, "store")
			_ = os.Mkdir(c.StoreRoot, 0o755)
		}, "one inside"},
		{"same root", func(c *Config) { c.StoreRoot = c.CacheRoot }, "one inside"},
		{"cache root a link into the store", func(c *Config) {
			c.CacheRoot = filepath.Join(filepath.Dir(c.CacheRoot), "cache-link")
			_ = os.Symlink(c.StoreRoot, c.CacheRoot)
		}, "one inside"},
		{"key file missing", func(c *Config) { c.KeyFile += "-gone" }, "node key file"},
		{"key file without a node key", func(c *Config) { writeFile(t, c.KeyFile, "pnk_short\n") },
			"holds no node key"},
		{"no key at all", func(c *Config) { c.KeyFile = "" }, "node key must look like"},
		{"negative cap", func(c *Config) { c.MaxCacheBytes = -1 }, "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newConfig(t)
			tc.change(&cfg)
			a, err := New(cfg)
			if err == nil {
				_ = a.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

func TestValidKey_OnlyNodeKeys(t *testing.T) {
	key := newKey(t)
	for s, want := range map[string]bool{key: true, key[:len(key)-1]: false, key + "A": false,
		"xnk_" + key[4:]: false, key[:10] + "+" + key[11:]: false, "": false} {
		if got := validKey(s); got != want {
			t.Errorf("validKey(%q) = %v, want %v", s, got, want)
		}
	}
}

// README walk: the agent took the first of two Authorization headers, so a
// request carrying the key and another credential was served; the server's
// API refuses two (token_invalid). The agent now refuses them too.
func TestAuth_TwoAuthorizationHeaders_401(t *testing.T) {
	ta := startAgent(t, newConfig(t))
	for _, second := range []string{"Bearer pnk_other", "Bearer " + ta.ep.Key} {
		req, _ := http.NewRequest("GET", ta.srv.URL+PathStatus, nil)
		req.Header.Add("Authorization", "Bearer "+ta.ep.Key)
		req.Header.Add("Authorization", second)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if p := problem(t, b); res.StatusCode != 401 || p.Code != CodeNodeKeyInvalid {
			t.Fatalf("the key and %q: %d %s", second, res.StatusCode, b)
		}
	}
}

package nodeagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platformapi/resources"
)

// A published cache directory from which a file was deleted or cut by
// hand is not ignored: it is reported corrupt, naming the file, at once
// (nothing to hash), and its verdict is logged once.

func TestFound_ShardDeletedByHand_CorruptNamingItLoggedOnce(t *testing.T) {
	cfg := newConfig(t)
	writeModel(t, cfg.StoreRoot, "models/acme/llama", model())
	ta := startAgent(t, cfg)
	ta.put("acme/llama", "models/acme/llama", 202)
	ta.waitState("acme/llama", resources.AgentCacheReady)
	shard := "model-00001-of-00002.safetensors"
	if err := os.Remove(filepath.Join(cfg.CacheRoot, "acme", "llama", shard)); err != nil {
		t.Fatal(err)
	}

	c := ta.waitNeverReady("acme/llama", resources.AgentCacheCorrupt)
	if c.Error == nil || c.Error.Code != resources.CodeChecksumMismatch ||
		!strings.Contains(c.Error.Detail, shard) || !strings.Contains(c.Error.Detail, "missing") {
		t.Fatalf("the corrupt cache does not say which file is missing: %+v", c.Error)
	}
	if c.Source != "models/acme/llama" || c.Path != filepath.Join(cfg.CacheRoot, "acme", "llama") {
		t.Fatalf("corrupt cache: %+v", c)
	}
	ta.reported("acme/llama")
	if n := strings.Count(ta.logs.String(), shard+`\" is missing`); n != 1 {
		t.Fatalf("the verdict is logged %d times, want once:\n%s", n, ta.logs)
	}
}

func TestFound_ShardCutShortByHand_CorruptNamingItsSize(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	ta := startAgent(t, cfg)
	dir := handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/llama", files)
	shard := "model-00002-of-00002.safetensors"
	if err := os.Truncate(filepath.Join(dir, shard), 1000); err != nil {
		t.Fatal(err)
	}

	c := ta.waitNeverReady("acme/llama", resources.AgentCacheCorrupt)
	if c.Error == nil || !strings.Contains(c.Error.Detail, shard) ||
		!strings.Contains(c.Error.Detail, "1000 bytes") {
		t.Fatalf("the corrupt cache does not say which file is cut: %+v", c.Error)
	}
	if n := ta.a.BytesHashed(); n != 0 {
		t.Fatalf("a cache missing bytes was hashed (%d bytes)", n)
	}
}

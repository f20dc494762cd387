package nodeagent

import (
	"os"
	"path/filepath"
	"testing"

	"platformapi/resources"
)

// TestCopy_OverACorruptCache_ItsBytesNotCountedUnderTheCap: under
// --max-cache-bytes the directory a copy replaces (removed when the copy
// is published) does not count as used; the copy fits and replaces it.
func TestCopy_OverACorruptCache_ItsBytesNotCountedUnderTheCap(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	dir := handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/llama", files)
	if err := os.Remove(filepath.Join(dir, "tokenizer/tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	cfg.MaxCacheBytes = 600 << 10 // the model (510 KiB) fits, not twice
	ta := startAgent(t, cfg)
	ta.waitNeverReady("acme/llama", resources.AgentCacheCorrupt)

	if c := ta.put("acme/llama", "models/acme/llama", 202); c.State != resources.AgentCacheCopying {
		t.Fatalf("PUT over a corrupt cache: %+v", c)
	}
	ta.waitState("acme/llama", resources.AgentCacheReady)
	sameFiles(t, filepath.Join(cfg.StoreRoot, "models/acme/llama"), dir)
}

package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// fileID is what shows a file was not written again: its inode and mtime.
type fileID struct {
	Ino   uint64
	MTime time.Time
}

func statID(t *testing.T, name string) fileID {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fileID{Ino: fi.Sys().(*syscall.Stat_t).Ino, MTime: fi.ModTime()}
}

func TestCopy_InterruptedThenPutAgain_ResumesWithoutCopyingVerifiedFiles(t *testing.T) {
	cfg := newConfig(t)
	// Largest first, two at once: c and a start, a is verified after 1 s.
	files := map[string][]byte{"a.bin": randomBytes(256 << 10), "b.bin": randomBytes(256 << 10),
		"c.bin": randomBytes(2 << 20)}
	const total = 2<<20 + 512<<10
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	slow := cfg
	slow.MaxBytesPerSecond = 512 << 10
	first := startAgent(t, slow)
	first.put("acme/llama", "models/acme/llama", 202)
	var running resources.AgentCache
	testkit.Eventually(t, 30*time.Second, "a file verified", func() bool {
		running = *first.cache("acme/llama")
		return len(running.Files) > 0
	})
	first.stop() // the copy is interrupted, its verified files stay
	partial := filepath.Join(cfg.CacheRoot, partialDir, "acme", "llama")
	ids := map[string]fileID{}
	var verified int64
	for _, f := range running.Files {
		ids[f.Path] = statID(t, filepath.Join(partial, f.Path))
		verified += f.SizeBytes
	}

	// A file the central copy no longer lists must not be published.
	writeFile(t, filepath.Join(partial, "old", "gone.bin"), "stale")

	second := startAgent(t, cfg)
	left := second.cache("acme/llama") // what the first left: copying, from the journal
	if left.State != resources.AgentCacheCopying || left.BytesDone < verified || left.BytesTotal != total {
		t.Fatalf("interrupted copy as reported: %+v (verified before %d)", left, verified)
	}
	if r, err := second.client.Report(context.Background(), second.ep); err != nil ||
		len(r.Caches) != 1 || !cmp.Equal(r.Caches[0], *left) {
		t.Fatalf("the status does not show the interrupted copy: %+v %v", r.Caches, err)
	}
	second.put("acme/llama", "models/acme/llama", 202)
	second.waitState("acme/llama", resources.AgentCacheReady)
	published := filepath.Join(cfg.CacheRoot, "acme", "llama")
	for name, id := range ids {
		if d := cmp.Diff(id, statID(t, filepath.Join(published, name))); d != "" {
			t.Fatalf("%s was written again (-before +after):\n%s", name, d)
		}
	}
	var names []string
	for p := range tree(t, published) {
		names = append(names, p)
	}
	slices.Sort(names)
	want := []string{".", CacheManifestName, "a.bin", "b.bin", "c.bin"}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("the published cache (-want +got):\n%s", d)
	}
	if read := second.a.BytesRead(); read > total-verified {
		t.Fatalf("the resumed copy read %d bytes of %d; %d were verified before", read, total, verified)
	}
}

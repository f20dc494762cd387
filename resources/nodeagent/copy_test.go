package nodeagent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// model is a small central copy: a few files, one in a sub-directory.
func model() map[string][]byte {
	return map[string][]byte{
		"model-00001-of-00002.safetensors": randomBytes(300 << 10),
		"model-00002-of-00002.safetensors": randomBytes(200 << 10),
		"config.json":                      []byte(`{"model_type":"llama"}`),
		"tokenizer/tokenizer.json":         randomBytes(10 << 10),
	}
}

func TestCopy_CopiesAndVerifies_ReadyWithSha256sumDigests(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	ta := startAgent(t, cfg)
	store := tree(t, cfg.StoreRoot)

	started := ta.put("acme/llama", "models/acme/llama", 202)
	if started.State != resources.AgentCacheCopying || started.BytesTotal != 300<<10+200<<10+22+10<<10 {
		t.Fatalf("started: %+v", started)
	}
	got := ta.waitState("acme/llama", resources.AgentCacheReady)
	want := resources.AgentCache{Repo: "acme/llama", State: resources.AgentCacheReady,
		Path: filepath.Join(cfg.CacheRoot, "acme", "llama"), Source: "models/acme/llama",
		BytesDone:  started.BytesTotal,
		BytesTotal: started.BytesTotal, Files: manifestFiles(t, cfg.StoreRoot, "models/acme/llama")}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("cache (-want +got):\n%s", d)
	}
	for name, data := range files {
		b, err := os.ReadFile(filepath.Join(want.Path, name))
		if err != nil || !bytes.Equal(b, data) {
			t.Fatalf("%s on the node: %v (equal %v)", name, err, bytes.Equal(b, data))
		}
	}
	if d := cmp.Diff(store, tree(t, cfg.StoreRoot)); d != "" {
		t.Fatalf("the store changed (-before +after):\n%s", d)
	}
	if again := ta.put("acme/llama", "models/acme/llama", 200); again.State != resources.AgentCacheReady {
		t.Fatalf("PUT of a ready cache: %+v", again)
	}
	if _, err := os.Stat(filepath.Join(cfg.CacheRoot, partialDir, "acme")); !os.IsNotExist(err) {
		t.Fatalf("the partial directory is left: %v", err)
	}
	checkReport(t, ta, want)
	// A new agent over the same roots finds the cache, hashes it again and
	// reports it ready.
	ta.stop()
	if d := cmp.Diff(want, startAgent(t, cfg).waitState("acme/llama", resources.AgentCacheReady)); d != "" {
		t.Fatalf("after a restart (-want +got):\n%s", d)
	}
}

func TestRemove_DeletesCacheAndPartial_204(t *testing.T) {
	cfg := newConfig(t)
	writeModel(t, cfg.StoreRoot, "models/acme/llama", model())
	writeModel(t, cfg.StoreRoot, "models/acme/slow", map[string][]byte{"w.bin": randomBytes(2 << 20)})
	cfg.MaxBytesPerSecond = 256 << 10 // the slow one takes 8 s
	ta := startAgent(t, cfg)
	ta.put("acme/llama", "models/acme/llama", 202)
	ta.waitState("acme/llama", resources.AgentCacheReady)
	ta.put("acme/slow", "models/acme/slow", 202)
	testkit.Eventually(t, 10*time.Second, "the slow copy writes", func() bool {
		return ta.cache("acme/slow").BytesDone > 0
	})

	for _, repo := range []string{"acme/llama", "acme/slow", "acme/llama", "acme/never"} {
		if status, b := ta.do("DELETE", PathCaches+repo, ""); status != 204 {
			t.Fatalf("DELETE %s: %d %s", repo, status, b)
		}
		if c := ta.cache(repo); c != nil {
			t.Fatalf("%s after DELETE: %+v", repo, c)
		}
	}
	// Only the agent's own (empty) directories are left.
	want := map[string]string{".": "dir", partialDir: "dir", trashDir: "dir"}
	if d := cmp.Diff(want, tree(t, cfg.CacheRoot)); d != "" {
		t.Fatalf("cache root after removing everything (-want +got):\n%s", d)
	}
}

func TestCopy_CorruptSourceFile_ChecksumMismatchNothingPublished(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	bad := append([]byte{}, files["config.json"]...)
	bad[0] ^= 1
	writeFile(t, filepath.Join(cfg.StoreRoot, "models/acme/llama/config.json"), string(bad))
	ta := startAgent(t, cfg)

	ta.put("acme/llama", "models/acme/llama", 202)
	got := ta.waitState("acme/llama", resources.AgentCacheFailed)
	if got.Error == nil || got.Error.Code != resources.CodeChecksumMismatch ||
		!strings.Contains(got.Error.Detail, `"config.json"`) {
		t.Fatalf("failure: %+v", got.Error)
	}
	for _, f := range got.Files {
		if f.Path == "config.json" {
			t.Fatalf("the mismatching file counts as verified: %+v", got.Files)
		}
	}
	partial := tree(t, filepath.Join(cfg.CacheRoot, partialDir))
	for p := range partial {
		if strings.Contains(p, "config.json") {
			t.Fatalf("the mismatching file is left on the node: %v", partial)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.CacheRoot, "acme")); !os.IsNotExist(err) {
		t.Fatalf("something was published: %v", err)
	}
	if r, err := ta.client.Report(context.Background(), ta.ep); err != nil || len(r.Caches) != 1 ||
		!cmp.Equal(r.Caches[0], got) {
		t.Fatalf("the status does not show the failure: %+v %v", r.Caches, err)
	}
	// The next PUT is told of the failure once; the one after starts again.
	if c := ta.put("acme/llama", "models/acme/llama", 200); c.State != resources.AgentCacheFailed {
		t.Fatalf("PUT after the failure: %+v", c)
	}
	ta.put("acme/llama", "models/acme/llama", 202)
	ta.waitState("acme/llama", resources.AgentCacheFailed)
}

func TestCopy_CapSmallerThanModel_InsufficientDiskNothingWritten(t *testing.T) {
	cfg := newConfig(t)
	writeModel(t, cfg.StoreRoot, "models/acme/llama", map[string][]byte{"w.bin": randomBytes(100 << 10)})
	writeFile(t, filepath.Join(cfg.CacheRoot, "other/thing/x.bin"), string(randomBytes(10<<10)))
	cfg.MaxCacheBytes = 50 << 10
	ta := startAgent(t, cfg)
	before := tree(t, cfg.CacheRoot)

	status, b := ta.do("PUT", PathCaches+"acme/llama", `{"source":"models/acme/llama"}`)
	p := problem(t, b)
	if status != 409 || p.Code != resources.CodeInsufficientDisk || p.NeededBytes == nil ||
		*p.NeededBytes != 100<<10 || p.FreeBytes == nil || *p.FreeBytes != 40<<10 ||
		p.MaxCacheBytes == nil || *p.MaxCacheBytes != 50<<10 {
		t.Fatalf("PUT: %d %s", status, b)
	}
	if d := cmp.Diff(before, tree(t, cfg.CacheRoot)); d != "" {
		t.Fatalf("the cache root changed (-before +after):\n%s", d)
	}
	r, err := ta.client.Report(context.Background(), ta.ep)
	if err != nil || r.MaxCacheBytes == nil || *r.MaxCacheBytes != 50<<10 || r.UsedBytes != 10<<10 {
		t.Fatalf("report: %+v %v", r, err)
	}
}

func TestCopy_MaxCopies_OthersWaitAndJoin(t *testing.T) {
	cfg := newConfig(t)
	cfg.MaxCopies, cfg.MaxBytesPerSecond = 1, 1<<20
	repos := []string{"acme/a", "acme/b"}
	for _, repo := range repos {
		writeModel(t, cfg.StoreRoot, "models/"+repo, map[string][]byte{"w.bin": randomBytes(512 << 10)})
	}
	ta := startAgent(t, cfg)
	for _, repo := range repos {
		ta.put(repo, "models/"+repo, 202)
	}
	joined := ta.put("acme/a", "models/acme/a", 202) // joins: no second copy
	if joined.State != resources.AgentCacheCopying {
		t.Fatalf("join: %+v", joined)
	}
	testkit.Eventually(t, 30*time.Second, "both ready", func() bool {
		a, b := ta.cache("acme/a"), ta.cache("acme/b")
		if a.State != resources.AgentCacheReady && b.State != resources.AgentCacheReady &&
			a.BytesDone > 0 && b.BytesDone > 0 {
			t.Fatalf("two copies ran at once: %d and %d bytes", a.BytesDone, b.BytesDone)
		}
		return a.State == resources.AgentCacheReady && b.State == resources.AgentCacheReady
	})
	if n := ta.a.BytesRead(); n != 2*512<<10 {
		t.Fatalf("read %d bytes from the store, want each model once (%d)", n, 2*512<<10)
	}
}

// TestCopy_LinksInsideTheStore_Followed copies a central copy laid out
// like a hub cache: its files are relative links to blobs elsewhere in
// the store.
func TestCopy_LinksInsideTheStore_Followed(t *testing.T) {
	cfg := newConfig(t)
	data := randomBytes(50 << 10)
	writeFile(t, filepath.Join(cfg.StoreRoot, "blobs", digest(data)), string(data))
	snap := filepath.Join(cfg.StoreRoot, "models/acme/llama")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../blobs/"+digest(data), filepath.Join(snap, "w.bin")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(snap, resources.CentralManifestName), digest(data)+"  w.bin\n")
	ta := startAgent(t, cfg)
	ta.put("acme/llama", "models/acme/llama", 202)
	c := ta.waitState("acme/llama", resources.AgentCacheReady)
	want := []resources.AgentFile{{Path: "w.bin", SizeBytes: 50 << 10, SHA256: digest(data)}}
	if d := cmp.Diff(want, c.Files); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
	if fi, err := os.Lstat(filepath.Join(c.Path, "w.bin")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the cache holds no regular file: %v %v", fi, err)
	}
}

// checkReport checks the status shows the file system and only want.
func checkReport(t *testing.T, ta *testAgent, want resources.AgentCache) {
	t.Helper()
	r, err := ta.client.Report(context.Background(), ta.ep)
	if err != nil {
		t.Fatal(err)
	}
	if r.FS.TotalBytes <= 0 || r.FS.FreeBytes <= 0 || r.FS.FreeBytes > r.FS.TotalBytes ||
		r.MaxCacheBytes != nil || r.UsedBytes < want.BytesTotal {
		t.Fatalf("report: fs %+v, cap %v, used %d", r.FS, r.MaxCacheBytes, r.UsedBytes)
	}
	if d := cmp.Diff([]resources.AgentCache{want}, r.Caches); d != "" {
		t.Fatalf("report's caches (-want +got):\n%s", d)
	}
}

// TestCopy_CacheOnAnotherFileSystem_ReadWriteCopyVerified copies into a
// cache on tmpfs (/dev/shm) from a store on the temporary directory's file
// system: copy_file_range refuses, the agent reads and writes instead.
func TestCopy_CacheOnAnotherFileSystem_ReadWriteCopyVerified(t *testing.T) {
	cfg := newConfig(t)
	var st, shm syscall.Stat_t
	if syscall.Stat(cfg.StoreRoot, &st) != nil || syscall.Stat("/dev/shm", &shm) != nil || st.Dev == shm.Dev {
		t.Skip("no /dev/shm on a file system of its own")
	}
	cache, err := os.MkdirTemp("/dev/shm", "nodeagent-test-")
	if err != nil {
		t.Skip("/dev/shm is not writable:", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(cache) })
	cfg.CacheRoot = cache
	files := map[string][]byte{"w.bin": randomBytes(9<<20 + 7), "small.json": []byte("{}")}
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	ta := startAgent(t, cfg)
	ta.put("acme/llama", "models/acme/llama", 202)
	c := ta.waitState("acme/llama", resources.AgentCacheReady)
	if d := cmp.Diff(manifestFiles(t, cfg.StoreRoot, "models/acme/llama"), c.Files); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
	for name, data := range files {
		if b, err := os.ReadFile(filepath.Join(c.Path, name)); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("%s differs on the node: %v", name, err)
		}
	}
}

package nodeagent

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// The caches in these tests are found on disk: laid out by hand (or left
// by an earlier agent), not published by the agent's own copy. The agent
// reports such a cache ready only after it hashed every file against the
// central copy's SHA256SUMS, without making a status request wait.

// handPlace lays out repo's cache under the cache root as a person copying
// it from another node would: files, and a cache manifest naming source
// and each file's size and sha256. The manifest comes last, so the agent
// never sees a manifest with a file missing.
func handPlace(t *testing.T, cacheRoot, repo, source string, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(cacheRoot, filepath.FromSlash(repo))
	m := cacheManifest{Repo: repo, Source: source}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), string(files[name]))
		m.Files = append(m.Files, entry{Path: name, Size: int64(len(files[name])),
			SHA256: digest(files[name])})
		m.BytesTotal += int64(len(files[name]))
	}
	b, _ := json.Marshal(m)
	writeFile(t, filepath.Join(dir, CacheManifestName), string(b))
	return dir
}

// touch moves name's modification time a second on; its bytes stay.
func touch(t *testing.T, name string) {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(name, time.Time{}, fi.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
}

// gate holds the agent's verification after its first hashed span until
// released (test hook Config.hashed).
type gate struct {
	blocked, open chan struct{}
	block, unlock sync.Once
}

// startGated starts an agent whose verifications wait at the gate; the
// gate opens before the agent stops.
func startGated(t *testing.T, cfg Config) (*testAgent, *gate) {
	t.Helper()
	g := &gate{blocked: make(chan struct{}), open: make(chan struct{})}
	cfg.hashed = func(string, string) {
		g.block.Do(func() { close(g.blocked) })
		<-g.open
	}
	ta := startAgent(t, cfg)
	t.Cleanup(g.release) // runs before the agent stops
	return ta, g
}

func (g *gate) release() { g.unlock.Do(func() { close(g.open) }) }

// waitBlocked waits until a verification is held at the gate.
func (g *gate) waitBlocked(t *testing.T) {
	t.Helper()
	select {
	case <-g.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("no verification reached the gate")
	}
}

// reported is repo's cache in the agent's status (nil: not listed).
func (ta *testAgent) reported(repo string) *resources.AgentCache {
	ta.t.Helper()
	r, err := ta.client.Report(context.Background(), ta.ep)
	if err != nil {
		ta.t.Fatalf("status: %v", err)
	}
	for _, c := range r.Caches {
		if c.Repo == repo {
			return &c
		}
	}
	return nil
}

// waitNeverReady polls repo's cache, in the status and alone, until it is
// in state, failing if either ever says ready.
func (ta *testAgent) waitNeverReady(repo, state string) resources.AgentCache {
	ta.t.Helper()
	var c *resources.AgentCache
	testkit.Eventually(ta.t, 30*time.Second, repo+" "+state, func() bool {
		s, one := ta.reported(repo), ta.cache(repo)
		for _, x := range []*resources.AgentCache{s, one} {
			if x != nil && x.State == resources.AgentCacheReady {
				ta.t.Fatalf("%s reported ready: %+v", repo, *x)
			}
		}
		c = one
		return s != nil && one != nil && s.State == state && one.State == state
	})
	return *c
}

func TestFound_OneByteChanged_CorruptNeverReadyThenCopiedOver(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	ta := startAgent(t, cfg)
	dir := handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/llama", files)
	testkit.ChangeByte(t, filepath.Join(dir, "model-00002-of-00002.safetensors"))

	c := ta.waitNeverReady("acme/llama", resources.AgentCacheCorrupt)
	if c.Error == nil || c.Error.Code != resources.CodeChecksumMismatch ||
		!strings.Contains(c.Error.Detail, "model-00002-of-00002.safetensors") {
		t.Fatalf("the corrupt cache does not say which file: %+v", c.Error)
	}
	if c.Source != "models/acme/llama" || c.Path != dir {
		t.Fatalf("corrupt cache: %+v", c)
	}
	if !strings.Contains(ta.logs.String(), "model-00002-of-00002.safetensors") {
		t.Fatalf("the agent's log does not name the corrupt file:\n%s", ta.logs)
	}
	// A copy replaces it with the central copy's bytes.
	ta.put("acme/llama", "models/acme/llama", 202)
	ta.waitState("acme/llama", resources.AgentCacheReady)
	sameFiles(t, filepath.Join(cfg.StoreRoot, "models/acme/llama"), dir)
}

// sameFiles fails unless the cache dir holds the central copy's files,
// byte for byte (the agent's manifest standing where SHA256SUMS does).
func sameFiles(t *testing.T, central, dir string) {
	t.Helper()
	want, got := tree(t, central), tree(t, dir)
	delete(want, resources.CentralManifestName)
	delete(got, CacheManifestName)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("the cache on the node (-central +node):\n%s", d)
	}
}

func TestFound_AtStart_ReadyOnlyOnceHashedThenNotHashedAgain(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	dir := handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/llama", files)
	var total int64
	for _, b := range files {
		total += int64(len(b))
	}
	ta := startAgent(t, cfg)
	var got resources.AgentCache
	testkit.Eventually(t, 30*time.Second, "the found cache ready", func() bool {
		c := ta.cache("acme/llama")
		if c.State == resources.AgentCacheReady && ta.a.BytesHashed() < total {
			t.Fatalf("ready after hashing %d of %d bytes", ta.a.BytesHashed(), total)
		}
		got = *c
		return c.State == resources.AgentCacheReady
	})
	want := resources.AgentCache{Repo: "acme/llama", State: resources.AgentCacheReady, Path: dir,
		Source: "models/acme/llama", BytesDone: total, BytesTotal: total,
		Files: manifestFiles(t, cfg.StoreRoot, "models/acme/llama")}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("found cache (-want +got):\n%s", d)
	}
	checkReport(t, ta, want)
	for range 3 { // as the reconcile asks, once a minute
		checkReport(t, ta, want)
		ta.cache("acme/llama")
	}
	if n := ta.a.BytesHashed(); n != total {
		t.Fatalf("hashed %d bytes; an unchanged cache must be hashed once (%d)", n, total)
	}
}

func TestFound_NoCentralCopy_UnverifiableUntilOneArrives(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	ta := startAgent(t, cfg)
	handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/llama", files)
	c := ta.waitNeverReady("acme/llama", resources.AgentCacheUnverifiable)
	if c.Error == nil || c.Error.Code != resources.CodeCentralCopyInvalid {
		t.Fatalf("unverifiable without saying why: %+v", c.Error)
	}
	if ta.a.BytesHashed() != 0 {
		t.Fatalf("hashed %d bytes with nothing to check them against", ta.a.BytesHashed())
	}
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files) // the weights reach the store
	ta.waitState("acme/llama", resources.AgentCacheReady)
}

func TestStatus_AnswersWhileAVerificationIsHeld(t *testing.T) {
	cfg := newConfig(t)
	files := map[string][]byte{"model.safetensors": randomBytes(9 << 20), "config.json": []byte(`{}`)}
	writeModel(t, cfg.StoreRoot, "models/acme/big", files)
	ta, g := startGated(t, cfg)
	handPlace(t, cfg.CacheRoot, "acme/big", "models/acme/big", files)
	first := ta.reported("acme/big") // the agent notices the cache and starts hashing it
	if first == nil || first.State != resources.AgentCacheVerifying {
		t.Fatalf("a cache found while running: %+v", first)
	}
	g.waitBlocked(t)
	// The verification is held mid-file: the status and the cache answer.
	for _, c := range []*resources.AgentCache{ta.reported("acme/big"), ta.cache("acme/big")} {
		if c == nil || c.State != resources.AgentCacheVerifying || c.BytesDone <= 0 ||
			c.BytesDone >= c.BytesTotal {
			t.Fatalf("while the verification is held: %+v", c)
		}
	}
	g.release()
	ta.waitState("acme/big", resources.AgentCacheReady)
}

func TestPublished_FileChanged_NotReadyUntilVerifiedAgain(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	ta, g := startGated(t, cfg)
	ta.put("acme/llama", "models/acme/llama", 202)
	ta.waitState("acme/llama", resources.AgentCacheReady)
	if n := ta.a.BytesHashed(); n != 0 {
		t.Fatalf("a cache the agent copied and verified was hashed again (%d bytes)", n)
	}
	shard := filepath.Join(cfg.CacheRoot, "acme", "llama", "model-00001-of-00002.safetensors")
	touch(t, shard) // same bytes, another modification time: it is checked again
	if c := ta.cache("acme/llama"); c.State != resources.AgentCacheVerifying {
		t.Fatalf("a changed cache: %+v", c)
	}
	g.waitBlocked(t)
	if c := ta.reported("acme/llama"); c.State != resources.AgentCacheVerifying {
		t.Fatalf("a changed cache while it is hashed: %+v", c)
	}
	g.release()
	ta.waitState("acme/llama", resources.AgentCacheReady)
	testkit.ChangeByte(t, shard)
	c := ta.waitNeverReady("acme/llama", resources.AgentCacheCorrupt)
	if c.Error == nil || !strings.Contains(c.Error.Detail, "model-00001-of-00002.safetensors") {
		t.Fatalf("corrupt: %+v", c.Error)
	}
}

// TestPut_FoundCacheOfAnotherCentralCopy_CopiedOver: a directory whose
// manifest names another central copy (another model's weights under this
// repo's name) is not this copy's cache: a PUT copies over it.
func TestPut_FoundCacheOfAnotherCentralCopy_CopiedOver(t *testing.T) {
	cfg := newConfig(t)
	other, files := model(), model()
	writeModel(t, cfg.StoreRoot, "models/acme/other", other)
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	ta := startAgent(t, cfg)
	dir := handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/other", other)
	if c := ta.waitState("acme/llama", resources.AgentCacheReady); c.Source != "models/acme/other" {
		t.Fatalf("verified against %q", c.Source)
	}
	if c := ta.put("acme/llama", "models/acme/llama", 202); c.State != resources.AgentCacheCopying {
		t.Fatalf("PUT over another central copy's cache: %+v", c)
	}
	if c := ta.waitState("acme/llama", resources.AgentCacheReady); c.Source != "models/acme/llama" {
		t.Fatalf("copied from %q", c.Source)
	}
	sameFiles(t, filepath.Join(cfg.StoreRoot, "models/acme/llama"), dir)
}

// TestPut_FoundCacheOfThisCentralCopy_JoinsItsCheck: a PUT for a cache
// found on disk of the same central copy waits for its check (202
// verifying) rather than copying; once verified it answers 200 ready, and
// nothing was read from the store.
func TestPut_FoundCacheOfThisCentralCopy_JoinsItsCheck(t *testing.T) {
	cfg := newConfig(t)
	files := model()
	writeModel(t, cfg.StoreRoot, "models/acme/llama", files)
	handPlace(t, cfg.CacheRoot, "acme/llama", "models/acme/llama", files)
	ta, g := startGated(t, cfg)
	g.waitBlocked(t) // checked from the start
	if c := ta.put("acme/llama", "models/acme/llama", 202); c.State != resources.AgentCacheVerifying {
		t.Fatalf("PUT while the found cache is checked: %+v", c)
	}
	g.release()
	testkit.Eventually(t, 30*time.Second, "PUT answers ready", func() bool {
		status, _ := ta.do("PUT", PathCaches+"acme/llama", `{"source":"models/acme/llama"}`)
		return status == 200
	})
	if n := ta.a.BytesRead(); n != 0 {
		t.Fatalf("read %d bytes from the store for a cache found whole on the node", n)
	}
}

// TestFound_CopyAskedWhileACacheIsChecked_RunsBeforeTheCheckGoesOn: the
// checks of caches found at start share the copy slots, but a copy an
// operator asks for waits only for the file being hashed, not for every
// check on the node (with one slot: the check gives way after its file).
func TestFound_CopyAskedWhileACacheIsChecked_RunsBeforeTheCheckGoesOn(t *testing.T) {
	cfg := newConfig(t)
	cfg.MaxCopies = 1
	found := map[string][]byte{"a.bin": randomBytes(1 << 20), "b.bin": randomBytes(1 << 20)}
	writeModel(t, cfg.StoreRoot, "models/acme/found", found)
	writeModel(t, cfg.StoreRoot, "models/acme/asked", model())
	handPlace(t, cfg.CacheRoot, "acme/found", "models/acme/found", found)
	onA, goA, goB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var reachedA, openA, openB sync.Once
	cfg.hashed = func(_, name string) { // holds the check in a.bin, then in b.bin
		if name == "a.bin" {
			reachedA.Do(func() { close(onA) })
			<-goA
			return
		}
		<-goB
	}
	ta := startAgent(t, cfg) // it starts checking the cache it found
	t.Cleanup(func() { openA.Do(func() { close(goA) }); openB.Do(func() { close(goB) }) })
	select {
	case <-onA:
	case <-time.After(30 * time.Second):
		t.Fatal("the found cache was not checked")
	}
	ta.put("acme/asked", "models/acme/asked", 202)
	openA.Do(func() { close(goA) }) // a.bin hashed: the check waits for a slot for b.bin
	ta.waitState("acme/asked", resources.AgentCacheReady)
	if c := ta.reported("acme/found"); c == nil || c.State != resources.AgentCacheVerifying {
		t.Fatalf("the found cache while the copy ran: %+v", c)
	}
	openB.Do(func() { close(goB) })
	ta.waitState("acme/found", resources.AgentCacheReady)
}

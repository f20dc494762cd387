// Package nodeagent is the node agent (`platformapi node-agent`) that copies
// model weights from the central model store onto a GPU node's local cache,
// and Client, the server's side of its protocol (resources.NodeAgentClient).
//
// The agent reads only under its store root and writes and deletes only
// under its cache root, through os.Root, so no path or link leads out of
// either. A copy checks the room it needs before its first byte, writes
// every file of the central copy's SHA256SUMS into <cache-root>/.partial/,
// checks each file's sha256 as it is written, journals each verified file
// (a resumed copy skips those), and publishes the cache with one rename to
// <cache-root>/<org>/<name> once every file verifies.
package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"

	"platformapi/resources"
)

// DefaultMaxCopies is how many copies run at once unless configured.
const DefaultMaxCopies = 2

// Config configures an Agent.
type Config struct {
	StoreRoot string // the central model store as mounted on the node (read only)
	CacheRoot string // the node's model cache (the agent's to write)
	// Key is the node key requests must carry; empty: read it from KeyFile,
	// again at most once a second, so a rotated file needs no restart.
	Key     string
	KeyFile string
	// MaxCacheBytes caps what the cache root may hold (0: no cap beyond
	// the file system's free space).
	MaxCacheBytes int64
	// MaxCopies is how many copies run at once (0: DefaultMaxCopies); the
	// others wait their turn.
	MaxCopies int
	// MaxBytesPerSecond throttles the bytes all copies read (0: no limit).
	MaxBytesPerSecond int64
	Logger            *slog.Logger // nil: discard
	// hashed, when set (tests), is called after each span a verification
	// of a found cache has hashed, with the file's name.
	hashed func(repo, name string)
}

// Agent is one node agent: its roots, its key and its copies. Handler
// serves its protocol; Close stops its copies.
type Agent struct {
	store, cache *os.Root
	cachePath    string // the cache root as configured, absolute
	keys         *keyring
	maxCache     int64
	log          *slog.Logger
	slots        *slots // --max-copies: copies first, then checks of found caches
	maxCopies    int
	throttle     *rate.Limiter // nil: none
	ctx          context.Context
	stop         context.CancelFunc
	wg           sync.WaitGroup
	bytesRead    atomic.Int64 // from the store, by every copy
	bytesHashed  atomic.Int64 // from the cache, by verifications of found caches
	hashed       func(repo, name string)

	admit    sync.Mutex // serialises starting and removing copies
	mu       sync.Mutex // guards jobs, failed, verdicts, checks and closed
	jobs     map[string]*job
	failed   map[string]resources.AgentCache
	verdicts map[string]verdict // by repo: the last check of its published directory
	checks   map[string]*check  // by repo: the check of its directory under way
	closed   bool
}

// MaxCopies is how many copies (and checks of found caches) run at once:
// Config.MaxCopies, or DefaultMaxCopies when that is 0.
func (a *Agent) MaxCopies() int { return a.maxCopies }

// New opens the agent's roots and reads its key. It refuses a root that is
// missing or not a directory, roots of which one lies inside the other, a
// key that is not a node key, and negative limits.
func New(cfg Config) (*Agent, error) {
	if cfg.MaxCacheBytes < 0 || cfg.MaxCopies < 0 || cfg.MaxBytesPerSecond < 0 {
		return nil, errors.New("node agent: the cache cap, the copy count and the throttle " +
			"must not be negative")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	storePath, cachePath, err := checkRoots(cfg.StoreRoot, cfg.CacheRoot)
	if err != nil {
		return nil, err
	}
	keys, err := newKeyring(cfg.Key, cfg.KeyFile, log)
	if err != nil {
		return nil, err
	}
	copies := cfg.MaxCopies
	if copies == 0 {
		copies = DefaultMaxCopies
	}
	a := &Agent{cachePath: cachePath, keys: keys, maxCache: cfg.MaxCacheBytes, log: log,
		slots: newSlots(copies), maxCopies: copies, jobs: map[string]*job{},
		failed: map[string]resources.AgentCache{}, throttle: newThrottle(cfg.MaxBytesPerSecond),
		verdicts: map[string]verdict{}, checks: map[string]*check{}, hashed: cfg.hashed}
	if err := a.openRoots(storePath, cachePath); err != nil {
		return nil, err
	}
	a.ctx, a.stop = context.WithCancel(context.Background())
	a.emptyTrash()
	a.wg.Add(1)
	go a.checkFound()
	return a, nil
}

// checkFound starts the checks of the caches found on disk at start, so
// they are verified before the server first asks.
func (a *Agent) checkFound() {
	defer a.wg.Done()
	for _, repo := range a.listRepos(".") {
		a.readReady(repo)
	}
}

// openRoots opens both roots.
func (a *Agent) openRoots(storePath, cachePath string) error {
	var err error
	if a.store, err = os.OpenRoot(storePath); err != nil {
		return fmt.Errorf("node agent: open the store root: %w", err)
	}
	if a.cache, err = os.OpenRoot(cachePath); err != nil {
		_ = a.store.Close()
		return fmt.Errorf("node agent: open the cache root: %w", err)
	}
	return nil
}

// checkRoots resolves both roots (links included) and refuses a missing
// one, one that is not a directory, and roots of which one holds the other.
func checkRoots(store, cache string) (storePath, cachePath string, err error) {
	resolved := make([]string, 2)
	for i, r := range []struct{ flag, path string }{{"store root", store}, {"cache root", cache}} {
		if r.path == "" {
			return "", "", fmt.Errorf("node agent: no %s given", r.flag)
		}
		abs, err := filepath.Abs(r.path)
		if err != nil {
			return "", "", fmt.Errorf("node agent: %s %s: %w", r.flag, r.path, err)
		}
		fi, err := os.Stat(abs)
		if err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
		if err == nil {
			resolved[i], err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return "", "", fmt.Errorf("node agent: %s %s: %w", r.flag, r.path, err)
		}
		if i == 1 {
			cachePath = abs
		}
	}
	if within(resolved[0], resolved[1]) || within(resolved[1], resolved[0]) {
		return "", "", fmt.Errorf("node agent: the store root %s and the cache root %s must not lie one inside "+
			"the other", store, cache)
	}
	return resolved[0], cachePath, nil
}

// within reports whether path is dir or lies under it (both clean, absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Handler serves the agent's protocol: GET /healthz without a key, and
// under /v1 (node key required) the status and one cache by repo.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Handle("GET "+PathStatus, a.requireKey(http.HandlerFunc(a.serveStatus)))
	mux.Handle("GET "+PathCaches+"{org}/{name}", a.requireKey(http.HandlerFunc(a.serveCache)))
	mux.Handle("PUT "+PathCaches+"{org}/{name}", a.requireKey(http.HandlerFunc(a.serveCopy)))
	mux.Handle("DELETE "+PathCaches+"{org}/{name}", a.requireKey(http.HandlerFunc(a.serveRemove)))
	mux.Handle("/", a.requireKey(http.HandlerFunc(serveUnknown)))
	return mux
}

// Close stops every copy (each keeps its verified files for a resume) and
// waits for them, then closes the roots. Requests after Close answer 503.
func (a *Agent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	a.stop()
	a.wg.Wait()
	return errors.Join(a.store.Close(), a.cache.Close())
}

// BytesRead is how many bytes the agent's copies have read from the store
// since it started.
func (a *Agent) BytesRead() int64 { return a.bytesRead.Load() }

// BytesHashed is how many bytes the agent has read from its cache since it
// started to verify caches it found there.
func (a *Agent) BytesHashed() int64 { return a.bytesHashed.Load() }

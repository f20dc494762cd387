package nodeagent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sync/errgroup"

	"platformapi/resources"
)

// Concurrency of one copy: files copied at once, and files being synced
// and renamed at once while the next ones copy.
const (
	filesAtOnce   = 2
	syncsAtOnce   = 4
	partialPerm   = 0o755
	cacheFilePerm = 0o644
)

// failure is a copy's end that a client is told about (err) with what
// caused it, which only the log sees.
type failure struct {
	err   *resources.Error
	cause error
}

func (f *failure) Error() string   { return fmt.Sprintf("%v: %v", f.err, f.cause) }
func (f *failure) Unwrap() []error { return []error{f.err, f.cause} }

// cacheFailure is a failure to write under the cache root while doing
// what; a full file system is insufficient_disk.
func cacheFailure(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &failure{resources.Errorf(resources.KindConflict, resources.CodeInsufficientDisk,
			"the cache file system filled up while the agent was to %s", what), err}
	}
	return &failure{resources.Errorf(resources.KindInternal, CodeCopyFailed,
		"the agent could not %s; its log says why", what), err}
}

// storeFailure is a failure to read file of the central copy.
func storeFailure(file string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &failure{invalidCopy("reading %q of the central copy failed", file), err}
}

// wrapf wraps err (when not nil) with what was being done.
func wrapf(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// copyCache copies every file of j's plan not verified yet into the
// partial directory, then publishes the cache.
func (a *Agent) copyCache(ctx context.Context, j *job, kept []entry) error {
	dir := path.Join(partialDir, j.repo)
	if err := a.cache.MkdirAll(dir, partialPerm); err != nil {
		return cacheFailure("create "+dir, err)
	}
	h := journalHeader{Repo: j.repo, Source: j.plan.source, BytesTotal: j.plan.total}
	jr, err := a.openJournal(dir, h, kept)
	if err != nil {
		return cacheFailure("write the copy's journal", err)
	}
	defer jr.close()
	done := make(map[string]bool, len(kept))
	for _, e := range kept {
		done[e.Path] = true
	}
	if err := a.prunePartial(dir, done); err != nil {
		return cacheFailure("clear the partial directory", err)
	}
	var todo []entry
	for _, e := range j.plan.files {
		if !done[e.Path] {
			todo = append(todo, e)
		}
	}
	// Largest first: the big files overlap, the small ones fill the gaps.
	slices.SortStableFunc(todo, func(x, y entry) int { return cmp.Compare(y.Size, x.Size) })
	a.log.Info("copy started", "repo", j.repo, "files_to_copy", len(todo),
		"files_verified_before", len(kept))
	if err := a.copyFiles(ctx, j, jr, dir, todo); err != nil {
		return err
	}
	return a.publish(j, dir)
}

// copyFiles copies files filesAtOnce at a time; each file, once written
// and verified, is synced, renamed and journaled while the next copies.
func (a *Agent) copyFiles(ctx context.Context, j *job, jr *journal, dir string, files []entry) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var g, syncs errgroup.Group
	g.SetLimit(filesAtOnce)
	syncs.SetLimit(syncsAtOnce)
	for _, e := range files {
		if ctx.Err() != nil {
			break // a file failed or the copy was stopped: start no more
		}
		g.Go(func() error {
			w, err := a.copyFile(ctx, j, dir, e)
			if err == nil {
				syncs.Go(func() error { return stopOnError(stop, a.keepFile(j, jr, w)) })
			}
			return stopOnError(stop, err)
		})
	}
	return errors.Join(g.Wait(), syncs.Wait())
}

// stopOnError stops the other files' copies when err is not nil.
func stopOnError(stop context.CancelCauseFunc, err error) error {
	if err != nil {
		stop(err)
	}
	return err
}

// written is a file copied and verified into its temporary name, still open.
type written struct {
	f         *os.File
	tmp, name string
	e         entry
	n         int64
}

// copyFile copies one file of the central copy into its temporary name in
// dir, hashing it as it is written; a digest that is not the manifest's
// removes it and fails the copy.
func (a *Agent) copyFile(ctx context.Context, j *job, dir string, e entry) (*written, error) {
	src, err := a.store.Open(path.Join(j.plan.source, e.Path))
	if err != nil {
		return nil, storeFailure(e.Path, err)
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, storeFailure(e.Path, err)
	}
	w := &written{name: path.Join(dir, e.Path), e: e}
	w.tmp = tempName(w.name)
	if err := a.cache.MkdirAll(path.Dir(w.name), partialPerm); err != nil {
		return nil, cacheFailure("create the directory of "+e.Path, err)
	}
	if w.f, err = a.cache.OpenFile(w.tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, cacheFilePerm); err != nil {
		return nil, cacheFailure("create "+e.Path, err)
	}
	sum, err := a.pump(ctx, src, w.f, e.Path, func(n int64) { w.n += n; j.progress(n) })
	if err == nil && sum != e.SHA256 {
		err = &failure{resources.Errorf(resources.KindConflict, resources.CodeChecksumMismatch,
			"%q: its sha256 is %s, %s says %s", e.Path, sum, resources.CentralManifestName, e.SHA256),
			errors.New("checksum mismatch")}
	}
	if err != nil {
		_ = w.f.Close()
		_ = a.cache.Remove(w.tmp)
		j.drop(w.n)
		return nil, err
	}
	w.e.Size = w.n
	return w, nil
}

// keepFile syncs a verified file, renames it into place and journals it.
func (a *Agent) keepFile(j *job, jr *journal, w *written) error {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = a.cache.Rename(w.tmp, w.name)
	}
	if err == nil {
		err = jr.add(w.e)
	}
	if err != nil {
		_ = a.cache.Remove(w.tmp)
		j.drop(w.n)
		return cacheFailure("keep "+w.e.Path, err)
	}
	j.verify(w.e, w.n)
	return nil
}

// publish writes the cache manifest into dir, syncs its directories and
// renames it to the cache's place, where it is ready at once.
func (a *Agent) publish(j *job, dir string) error {
	j.mu.Lock()
	m := cacheManifest{Repo: j.repo, Source: j.plan.source, Files: make([]entry, 0, len(j.files))}
	for _, f := range j.files {
		m.Files = append(m.Files, entry{Path: f.Path, Size: f.SizeBytes, SHA256: f.SHA256})
		m.BytesTotal += f.SizeBytes
	}
	j.mu.Unlock()
	slices.SortFunc(m.Files, func(x, y entry) int { return strings.Compare(x.Path, y.Path) })
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := a.writeAtomic(path.Join(dir, CacheManifestName), b); err != nil {
		return cacheFailure("write the cache manifest", err)
	}
	if err := a.syncTree(dir); err != nil {
		return cacheFailure("sync the copied files", err)
	}
	if err := a.checkCachePaths(j.repo, false); err != nil {
		return err
	}
	if err := a.cache.MkdirAll(path.Dir(j.repo), partialPerm); err != nil {
		return cacheFailure("create the cache's org directory", err)
	}
	stale, err := a.toTrash(j.repo)
	if err != nil {
		return cacheFailure("move aside what stood in the cache's place", err)
	}
	if stale != "" {
		a.log.Warn("a directory that was not a verified cache of this central copy stood in the "+
			"cache's place: removed", "repo", j.repo)
		defer a.cache.RemoveAll(stale)
	}
	if err := a.cache.Rename(dir, j.repo); err != nil {
		return cacheFailure("publish the cache", err)
	}
	a.notePublished(j.repo)
	_ = a.cache.Remove(path.Join(j.repo, journalName))
	_ = a.cache.Remove(path.Dir(dir)) // .partial/<org>, when empty
	return a.syncDir(path.Dir(j.repo))
}

// prunePartial removes from the partial directory dir whatever is not a
// verified file to keep nor the journal (files of an earlier central copy
// that no longer lists them, a file half written when the agent stopped),
// then the directories left empty. Only listed files are ever published.
func (a *Agent) prunePartial(dir string, keep map[string]bool) error {
	var stale, dirs []string
	err := fs.WalkDir(a.cache.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir:
			dirs = append(dirs, p)
		case !d.IsDir() && rel != journalName && !keep[rel]:
			stale = append(stale, p)
		}
		return nil
	})
	for _, p := range stale {
		err = errors.Join(err, a.cache.Remove(p))
	}
	for _, d := range slices.Backward(dirs) {
		_ = a.cache.Remove(d) // fails while it holds something
	}
	return err
}

// syncTree syncs every directory under dir, so the renames into it last.
func (a *Agent) syncTree(dir string) error {
	return fs.WalkDir(a.cache.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return a.syncDir(p)
	})
}

// syncDir syncs one directory under the cache root.
func (a *Agent) syncDir(dir string) error {
	f, err := a.cache.Open(dir)
	if err != nil {
		return wrapf("open "+dir, err)
	}
	defer f.Close()
	return wrapf("sync "+dir, f.Sync())
}

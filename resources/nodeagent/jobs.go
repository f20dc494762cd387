package nodeagent

import (
	"context"
	"errors"
	"path"
	"strings"
	"sync"

	"platformapi/resources"
)

// job is one copy: queued until a slot frees, then running. Its verified
// files and bytes grow as it goes.
type job struct {
	repo   string
	plan   *plan
	cancel context.CancelFunc
	done   chan struct{} // closed when the copy ended

	mu       sync.Mutex
	files    []resources.AgentFile // verified so far
	verified int64                 // bytes of files
	inflight int64                 // bytes written of files not verified yet
}

// snapshot is the job's cache as the agent reports it.
func (j *job) snapshot(hostPath string) resources.AgentCache {
	j.mu.Lock()
	defer j.mu.Unlock()
	files := append([]resources.AgentFile{}, j.files...)
	sortFiles(files)
	return resources.AgentCache{Repo: j.repo, State: resources.AgentCacheCopying, Path: hostPath,
		Source: j.plan.source, BytesDone: j.verified + j.inflight, BytesTotal: j.plan.total, Files: files}
}

// progress counts n more bytes written of a file not verified yet.
func (j *job) progress(n int64) { j.mu.Lock(); j.inflight += n; j.mu.Unlock() }

// verify moves a written file (written bytes) to the verified ones.
func (j *job) verify(e entry, written int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.inflight -= written
	j.verified += e.Size
	j.files = append(j.files, agentFile(e))
}

// drop forgets written bytes of a file that will not be verified.
func (j *job) drop(written int64) { j.progress(-written) }

// checkRepo refuses a repo that is not org/name.
func checkRepo(repo string) error {
	if err := resources.ValidateRepo(repo); err != nil {
		return resources.Invalid("repo", CodeInvalidRepo, "the repo %q is not org/name", repo)
	}
	return nil
}

// checkSource refuses a source that is not a clean relative path.
func checkSource(source string) error {
	if source == "" || strings.HasPrefix(source, "/") || path.Clean(source) != source || source == "." ||
		source == ".." || strings.HasPrefix(source, "../") || strings.ContainsAny(source, "\\\x00") {
		return resources.Invalid("source", CodeInvalidSource,
			"source must be the central copy's path relative to the store root: clean, not absolute, no '..'")
	}
	return nil
}

// stopping is the answer of an agent shutting down.
var stopping = resources.Errorf(resources.KindUnavailable, CodeAgentStopping,
	"the node agent is shutting down")

// startCopy starts the copy of repo from source, joins the copy running
// or the check of a cache of source found on disk, or answers the cache
// ready (accepted false) or a failure not yet reported to a PUT (accepted
// false, the failure then forgotten: the next PUT starts again, resuming
// from the verified files). A found cache that is corrupt, unverifiable or
// of another central copy is copied over.
func (a *Agent) startCopy(repo, source string) (c resources.AgentCache, accepted bool, err error) {
	if err := checkRepo(repo); err != nil {
		return c, false, err
	}
	if err := checkSource(source); err != nil {
		return c, false, err
	}
	a.admit.Lock()
	defer a.admit.Unlock()
	if c, found, err := a.existing(repo, source); found || err != nil {
		running := c.State == resources.AgentCacheCopying || c.State == resources.AgentCacheVerifying
		return c, found && running, err
	}
	if err := a.checkCachePaths(repo, true); err != nil {
		return c, false, err
	}
	p, err := a.readPlan(source)
	if err != nil {
		return c, false, err
	}
	kept := a.verifiedEntries(repo, p)
	if err := a.checkRoom(repo, p, kept); err != nil {
		return c, false, err
	}
	c, err = a.launch(repo, p, kept)
	return c, err == nil, err
}

// existing answers what a PUT finds already there: the running copy, an
// unreported failure (forgotten once answered), or the cache of source,
// ready or being checked.
func (a *Agent) existing(repo, source string) (resources.AgentCache, bool, error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return resources.AgentCache{}, false, stopping
	}
	if j := a.jobs[repo]; j != nil {
		a.mu.Unlock()
		return j.snapshot(a.hostPath(repo)), true, nil
	}
	if f, ok := a.failed[repo]; ok {
		delete(a.failed, repo)
		a.mu.Unlock()
		return f, true, nil
	}
	a.mu.Unlock()
	c := a.readReady(repo)
	if c != nil && c.Source == source &&
		(c.State == resources.AgentCacheReady || c.State == resources.AgentCacheVerifying) {
		return *c, true, nil
	}
	return resources.AgentCache{}, false, nil
}

// verifiedEntries are the files of p that the partial copy of repo has
// verified already: journaled with the same path, size and digest, and
// there with that size.
func (a *Agent) verifiedEntries(repo string, p *plan) []entry {
	want := make(map[string]entry, len(p.files))
	for _, e := range p.files {
		want[e.Path] = e
	}
	dir := path.Join(partialDir, repo)
	_, journaled := a.readJournal(dir)
	var kept []entry
	for _, e := range journaled {
		if w, ok := want[e.Path]; ok && w == e && a.hasFile(path.Join(dir, e.Path), e.Size) {
			kept = append(kept, e)
			delete(want, e.Path) // once
		}
	}
	return kept
}

// launch registers the copy and starts it; it waits for a slot first. An
// agent closing meanwhile refuses it.
func (a *Agent) launch(repo string, p *plan, kept []entry) (resources.AgentCache, error) {
	ctx, cancel := context.WithCancel(a.ctx)
	j := &job{repo: repo, plan: p, cancel: cancel, done: make(chan struct{})}
	for _, e := range kept {
		j.verify(e, 0)
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		cancel()
		return resources.AgentCache{}, stopping
	}
	a.jobs[repo] = j
	a.wg.Add(1)
	a.mu.Unlock()
	a.log.Info("copy queued", "repo", repo, "source", p.source, "files", len(p.files),
		"bytes_total", p.total, "files_verified_before", len(kept))
	go a.run(ctx, j, kept)
	return j.snapshot(a.hostPath(repo)), nil
}

// run waits for a slot, copies and publishes, and records how it ended.
func (a *Agent) run(ctx context.Context, j *job, kept []entry) {
	defer a.wg.Done()
	defer close(j.done)
	defer j.cancel()
	err := a.slots.acquire(ctx, true)
	if err == nil {
		err = a.copyCache(ctx, j, kept)
		a.slots.release()
	}
	a.ended(j, err)
}

// ended forgets the job and remembers its failure, if it failed.
func (a *Agent) ended(j *job, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.jobs, j.repo)
	switch {
	case err == nil:
		a.log.Info("cache ready", "repo", j.repo, "bytes", j.plan.total)
	case errors.Is(err, context.Canceled):
		a.log.Info("copy stopped; its verified files stay for a resume", "repo", j.repo)
	default:
		e, ok := resources.AsError(err)
		if !ok {
			e = resources.Errorf(resources.KindInternal, CodeCopyFailed,
				"the copy failed; the agent's log says why")
		}
		a.log.Error("copy failed", "repo", j.repo, "code", e.Code, "error", err)
		c := j.snapshot(a.hostPath(j.repo))
		c.State = resources.AgentCacheFailed
		c.Error = &resources.OperationError{Code: e.Code, Detail: e.Detail}
		a.failed[j.repo] = c
	}
}

// remove stops the copy of repo, if any, and deletes its partial and its
// published directory: each is renamed into the trash first (so it
// disappears at once), then deleted.
func (a *Agent) remove(repo string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	trashed, err := a.detach(repo)
	for _, t := range trashed {
		if rerr := a.cache.RemoveAll(t); rerr != nil {
			a.log.Error("deleting a removed cache", "repo", repo, "error", rerr)
		}
	}
	return err
}

// detach stops repo's copy and renames its directories into the trash.
func (a *Agent) detach(repo string) ([]string, error) {
	a.admit.Lock()
	defer a.admit.Unlock()
	a.mu.Lock()
	j, closed := a.jobs[repo], a.closed
	a.mu.Unlock()
	if closed {
		return nil, stopping
	}
	if err := a.checkCachePaths(repo, false); err != nil {
		return nil, err
	}
	if j != nil {
		j.cancel()
		<-j.done
	}
	a.mu.Lock()
	delete(a.failed, repo)
	a.mu.Unlock()
	var trashed []string
	for _, dir := range []string{repo, path.Join(partialDir, repo)} {
		t, err := a.toTrash(dir)
		if err != nil {
			return trashed, err
		}
		if t != "" {
			trashed = append(trashed, t)
		}
		_ = a.cache.Remove(path.Dir(dir)) // the org directory, when empty
	}
	a.forgetVerdict(repo)
	return trashed, nil
}

package nodeagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"sync/atomic"

	"platformapi/resources"
)

// verdict is the outcome of the last check of a cache directory: the cache
// as reported (ready, corrupt or unverifiable) for the fingerprint checked
// and, unless ready, the stamp of the central SHA256SUMS it was checked
// against (a new central copy asks again).
type verdict struct {
	fp    fingerprint
	sums  stamp
	cache resources.AgentCache
}

// check is the verification of one found cache directory, hashing a file
// or waiting for a slot to hash the next.
type check struct {
	fp     fingerprint
	cancel context.CancelFunc
	hashed atomic.Int64 // bytes hashed so far
}

// verifying is the found cache f while it is checked: the check of these
// very files goes on, or one starts (in the background; nothing waits).
func (a *Agent) verifying(f *found) *resources.AgentCache {
	c := f.cache
	c.State, c.BytesDone, c.Files = resources.AgentCacheVerifying, 0, []resources.AgentFile{}
	a.mu.Lock()
	defer a.mu.Unlock()
	ch := a.checks[f.repo]
	if ch == nil || ch.fp != f.fp {
		a.stopCheck(f.repo)
		ch = a.startCheck(f)
	}
	if ch != nil {
		c.BytesDone = ch.hashed.Load()
	}
	return &c
}

// startCheck starts the check of f; nil when the agent is closing. a.mu
// is held.
func (a *Agent) startCheck(f *found) *check {
	if a.closed {
		return nil
	}
	ctx, cancel := context.WithCancel(a.ctx)
	ch := &check{fp: f.fp, cancel: cancel}
	a.checks[f.repo] = ch
	a.wg.Add(1)
	go a.runCheck(ctx, ch, f)
	return ch
}

// stopCheck stops and forgets repo's check, if any. a.mu is held.
func (a *Agent) stopCheck(repo string) {
	if ch := a.checks[repo]; ch != nil {
		ch.cancel()
		delete(a.checks, repo)
	}
}

// runCheck verifies f and records the verdict.
func (a *Agent) runCheck(ctx context.Context, ch *check, f *found) {
	defer a.wg.Done()
	defer ch.cancel()
	v := a.verify(ctx, ch, f)
	if ctx.Err() != nil {
		v = nil
	}
	a.settle(f.repo, ch, v)
}

// settle records v (when not nil) as the verdict on repo's directory,
// unless ch was stopped or replaced meanwhile.
func (a *Agent) settle(repo string, ch *check, v *verdict) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.checks[repo] != ch {
		return
	}
	delete(a.checks, repo)
	if v != nil {
		a.verdicts[repo] = *v
	}
}

// verify checks the found cache f against the central copy its manifest
// names: both list the same files with the same sha256, and each file on
// the node hashes to it. nil when stopped.
func (a *Agent) verify(ctx context.Context, ch *check, f *found) *verdict {
	v := &verdict{fp: f.fp, sums: a.sumsStamp(f.m.Source), cache: f.cache}
	want, err := a.centralSums(f.m.Source)
	if err != nil {
		return a.judge(v, resources.AgentCacheUnverifiable, err)
	}
	if err := sameListing(f.m.Files, want); err != nil {
		return a.judge(v, resources.AgentCacheCorrupt, err)
	}
	for _, e := range f.m.Files {
		sum, err := a.hashInTurn(ctx, ch, f.repo, e.Path)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return a.judge(v, resources.AgentCacheCorrupt, mismatch("%q cannot be read: %v", e.Path, err))
		case sum != e.SHA256:
			return a.judge(v, resources.AgentCacheCorrupt, mismatch("%q: its sha256 is %s, the central "+
				"copy's %s says %s", e.Path, sum, resources.CentralManifestName, e.SHA256))
		}
	}
	a.log.Info("found cache verified", "repo", f.repo, "source", f.m.Source,
		"bytes", f.cache.BytesTotal)
	return v
}

// judge turns v into a verdict of state for err (a *resources.Error) and
// logs it.
func (a *Agent) judge(v *verdict, state string, err error) *verdict {
	e, _ := resources.AsError(err)
	v.cache.State, v.cache.BytesDone, v.cache.Files = state, 0, []resources.AgentFile{}
	v.cache.Error = &resources.OperationError{Code: e.Code, Detail: e.Detail}
	a.log.Warn("found cache not ready: it is not adopted", "repo", v.cache.Repo, "state", state,
		"code", e.Code, "detail", e.Detail)
	return v
}

func mismatch(format string, args ...any) *resources.Error {
	return resources.Errorf(resources.KindConflict, resources.CodeChecksumMismatch, format, args...)
}

// centralSums reads the entries of the SHA256SUMS of the central copy at
// source (a *resources.Error CodeCentralCopyInvalid when there is none to
// use).
func (a *Agent) centralSums(source string) ([]entry, error) {
	if checkSource(source) != nil {
		return nil, invalidCopy("the cache's manifest names no usable central copy (%q)", source)
	}
	b, err := a.readStoreFile(source, resources.CentralManifestName, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	return parseManifest(bytes.NewReader(b))
}

// sameListing refuses a cache manifest that does not list exactly the
// central copy's files with its digests.
func sameListing(have, want []entry) error {
	listed := make(map[string]string, len(have))
	for _, e := range have {
		listed[e.Path] = e.SHA256
	}
	for _, e := range want {
		sum, ok := listed[e.Path]
		switch {
		case !ok:
			return mismatch("the central copy lists %q, the cache does not hold it", e.Path)
		case sum != e.SHA256:
			return mismatch("%q: the cache's manifest says sha256 %s, the central copy's %s says %s",
				e.Path, sum, resources.CentralManifestName, e.SHA256)
		}
		delete(listed, e.Path)
	}
	if len(listed) > 0 {
		extra := slices.Min(slices.Collect(maps.Keys(listed)))
		return mismatch("the cache holds %q, which the central copy does not list", extra)
	}
	if len(have) != len(want) {
		return mismatch("the cache's manifest lists a file twice")
	}
	return nil
}

// hashInTurn hashes one file of a found cache once a slot is free (checks
// and copies share the limit; a waiting copy goes first).
func (a *Agent) hashInTurn(ctx context.Context, ch *check, repo, name string) (string, error) {
	if err := a.slots.acquire(ctx, false); err != nil {
		return "", err
	}
	defer a.slots.release()
	return a.hashFile(ctx, ch, repo, name)
}

// hashFile answers the sha256 of name in repo's cache directory, counting
// the bytes hashed as it goes.
func (a *Agent) hashFile(ctx context.Context, ch *check, repo, name string) (string, error) {
	f, err := a.cache.Open(path.Join(repo, name))
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	h := sha256.New()
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.Read(*buf)
		if n > 0 {
			h.Write((*buf)[:n])
			ch.hashed.Add(int64(n))
			a.bytesHashed.Add(int64(n))
			if a.hashed != nil {
				a.hashed(repo, name)
			}
		}
		if errors.Is(err, io.EOF) {
			return hex.EncodeToString(h.Sum(nil)), nil
		}
		if err != nil {
			return "", fmt.Errorf("read: %w", err)
		}
	}
}

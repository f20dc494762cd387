package nodeagent

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"

	"platformapi/resources"
)

// A published cache directory is reported ready only once every file's
// sha256 has been checked against the central copy's SHA256SUMS: by the
// copy that published it, or, for a directory this agent did not publish
// since it started (found at start, or appearing later), by a verification
// in the background (verify.go). Verdicts are remembered per directory
// under a fingerprint of its manifest's and files' sizes and modification
// times, so an unchanged cache is hashed once; any change asks again. A
// directory whose manifest lists a file that is missing, not a regular
// file or of another size is corrupt at once (nothing to hash), its
// verdict logged once: it was ignored, though its bytes stayed.

// stamp is what shows a file unchanged: its size and modification time.
type stamp struct {
	size  int64
	mtime int64 // nanoseconds since the epoch
}

func stampOf(fi fs.FileInfo) stamp { return stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()} }

// noStamp stands for a file that is not there (or cannot be read).
var noStamp = stamp{size: -1}

// fingerprint sums the stamps of a cache directory's manifest and files.
type fingerprint [sha256.Size]byte

// found is a published cache directory as it stands: its manifest, the
// fingerprint of its files, and the cache it is once verified.
type found struct {
	repo  string
	m     cacheManifest
	fp    fingerprint
	cache resources.AgentCache // ready: every file of the manifest
	// broken says which file of the manifest is missing, not a regular
	// file or not of the recorded size (nil: each is there): such a
	// directory is corrupt without hashing anything.
	broken *resources.Error
}

// readFound reads repo's published cache directory: nil unless it holds a
// valid cache manifest for repo. A file of the manifest that is not there,
// a regular file of the recorded size, makes it broken.
func (a *Agent) readFound(repo string) *found {
	f, err := a.cache.Open(path.Join(repo, CacheManifestName))
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	var m cacheManifest
	if err != nil || json.NewDecoder(io.LimitReader(f, maxJournalBytes)).Decode(&m) != nil ||
		m.Repo != repo || len(m.Files) == 0 {
		return nil
	}
	h := sha256.New()
	writeStamp(h, CacheManifestName, stampOf(fi))
	c := resources.AgentCache{Repo: repo, State: resources.AgentCacheReady, Path: a.hostPath(repo),
		Source: m.Source, Files: make([]resources.AgentFile, 0, len(m.Files))}
	out := &found{repo: repo, m: m}
	for _, e := range m.Files {
		if checkRelPath(e.Path) != nil || !validDigest(e.SHA256) {
			return nil
		}
		st, broken := a.foundFile(repo, e)
		if out.broken == nil {
			out.broken = broken
		}
		writeStamp(h, e.Path, st)
		c.Files = append(c.Files, agentFile(e))
		c.BytesTotal += e.Size
	}
	c.BytesDone = c.BytesTotal
	sortFiles(c.Files)
	out.cache = c
	h.Sum(out.fp[:0])
	return out
}

// foundFile stats the file e of repo's published directory: its stamp,
// and why it is not the file the manifest lists (nil when it may be).
func (a *Agent) foundFile(repo string, e entry) (stamp, *resources.Error) {
	fi, err := a.cache.Lstat(path.Join(repo, e.Path))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return noStamp, mismatch("%q is missing (the cache's manifest lists it, %d bytes)",
			e.Path, e.Size)
	case err != nil:
		return noStamp, mismatch("%q cannot be read", e.Path)
	case !fi.Mode().IsRegular():
		return stampOf(fi), mismatch("%q is not a regular file", e.Path)
	case fi.Size() != e.Size:
		return stampOf(fi), mismatch("%q is %d bytes, the cache's manifest says %d", e.Path,
			fi.Size(), e.Size)
	}
	return stampOf(fi), nil
}

func writeStamp(h hash.Hash, name string, s stamp) {
	fmt.Fprintf(h, "%q %d %d\n", name, s.size, s.mtime)
}

// sumsStamp is the stamp of the SHA256SUMS of the central copy at source
// (noStamp when there is none to read).
func (a *Agent) sumsStamp(source string) stamp {
	if checkSource(source) != nil {
		return noStamp
	}
	fi, err := a.store.Stat(path.Join(source, resources.CentralManifestName))
	if err != nil {
		return noStamp
	}
	return stampOf(fi)
}

// readReady is repo's published cache as the agent reports it: nil unless
// readFound finds it; corrupt at once when a file is missing or of another
// size; ready once verified (by the copy that published it or by a check
// of what was found), corrupt or unverifiable as a check found it, else
// verifying, with the check started in the background. It never waits
// for a check.
func (a *Agent) readReady(repo string) *resources.AgentCache {
	f := a.readFound(repo)
	if f == nil {
		return nil
	}
	a.mu.Lock()
	v, known := a.verdicts[repo]
	a.mu.Unlock()
	if known && v.fp == f.fp && (v.cache.State == resources.AgentCacheReady || f.broken != nil ||
		v.sums == a.sumsStamp(f.m.Source)) {
		c := v.cache
		return &c
	}
	if f.broken != nil {
		return a.judgeBroken(f)
	}
	return a.verifying(f)
}

// judgeBroken records (and logs, once per fingerprint) the verdict on the
// broken found cache f: corrupt, naming the file. A check of what stood
// there before is stopped.
func (a *Agent) judgeBroken(f *found) *resources.AgentCache {
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.verdicts[f.repo]; !ok || v.fp != f.fp {
		a.stopCheck(f.repo)
		v := a.judge(&verdict{fp: f.fp, cache: f.cache}, resources.AgentCacheCorrupt, f.broken)
		a.verdicts[f.repo] = *v
	}
	c := a.verdicts[f.repo].cache
	return &c
}

// notePublished records the cache a copy has just published as verified
// (each file was hashed as it was written), so it is ready at once; a
// check of what stood there before is stopped.
func (a *Agent) notePublished(repo string) {
	f := a.readFound(repo)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopCheck(repo)
	delete(a.verdicts, repo)
	if f != nil && f.broken == nil {
		a.verdicts[repo] = verdict{fp: f.fp, cache: f.cache}
	}
}

// forgetVerdict drops what the agent knows of repo's directory (removed).
func (a *Agent) forgetVerdict(repo string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopCheck(repo)
	delete(a.verdicts, repo)
}

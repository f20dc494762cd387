package nodeagent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"platformapi/resources"
)

// checkCachePaths refuses a copy or a removal of repo when a directory it
// would go through under the cache root is a symbolic link or not a
// directory: the agent never follows a link out of its cache root (os.Root
// would refuse such a link anyway; this says why before anything is done).
// forCopy adds the partial directory the copy writes into.
func (a *Agent) checkCachePaths(repo string, forCopy bool) error {
	org := path.Dir(repo)
	dirs := []string{partialDir, path.Join(partialDir, org), org, trashDir}
	if forCopy {
		dirs = append(dirs, path.Join(partialDir, repo))
	}
	for _, d := range dirs {
		fi, err := a.cache.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return pathInvalid("<cache-root>/%s cannot be used inside the cache root", d)
		case fi.Mode()&fs.ModeSymlink != 0:
			return pathInvalid("<cache-root>/%s is a symbolic link; the agent follows no link "+
				"in its cache root", d)
		case !fi.IsDir():
			return pathInvalid("<cache-root>/%s is not a directory", d)
		}
	}
	return nil
}

func pathInvalid(format string, args ...any) *resources.Error {
	return resources.Errorf(resources.KindConflict, CodeCachePathInvalid, format, args...)
}

// toTrash renames dir (under the cache root) into the trash and answers
// its new name; "" when there was nothing.
func (a *Agent) toTrash(dir string) (string, error) {
	if _, err := a.cache.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err := a.cache.MkdirAll(trashDir, 0o700); err != nil {
		return "", fmt.Errorf("create the trash: %w", err)
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	to := path.Join(trashDir, strings.ReplaceAll(dir, "/", "_")+"-"+hex.EncodeToString(nonce[:]))
	if err := a.cache.Rename(dir, to); err != nil {
		return "", fmt.Errorf("move %s into the trash: %w", dir, err)
	}
	return to, nil
}

// emptyTrash deletes what removals left in the trash (an agent stopped
// while deleting).
func (a *Agent) emptyTrash() {
	if err := a.cache.RemoveAll(trashDir); err != nil {
		a.log.Error("emptying the cache's trash", "error", err)
	}
}

// listRepos lists the org/name directories under base ("." or the
// partial directory), links and hidden names left out.
func (a *Agent) listRepos(base string) []string {
	var out []string
	orgs, _ := fs.ReadDir(a.cache.FS(), base)
	for _, o := range orgs {
		if !o.IsDir() || strings.HasPrefix(o.Name(), ".") {
			continue
		}
		names, _ := fs.ReadDir(a.cache.FS(), path.Join(base, o.Name()))
		for _, n := range names {
			repo := o.Name() + "/" + n.Name()
			if n.IsDir() && resources.ValidateRepo(repo) == nil {
				out = append(out, repo)
			}
		}
	}
	return out
}

// readPartial is the copy of repo left in the partial directory by an
// agent that stopped: copying, with the bytes its journal verified.
func (a *Agent) readPartial(repo string) *resources.AgentCache {
	dir := path.Join(partialDir, repo)
	if fi, err := a.cache.Lstat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	h, entries := a.readJournal(dir)
	c := &resources.AgentCache{Repo: repo, State: resources.AgentCacheCopying, Path: a.hostPath(repo),
		Source: h.Source, BytesTotal: h.BytesTotal, Files: []resources.AgentFile{}}
	seen := map[string]bool{}
	for _, e := range entries {
		if !seen[e.Path] && a.hasFile(path.Join(dir, e.Path), e.Size) {
			seen[e.Path] = true
			c.Files = append(c.Files, agentFile(e))
			c.BytesDone += e.Size
		}
	}
	sortFiles(c.Files)
	return c
}

// usedBytes is what the regular files under the cache root hold.
func (a *Agent) usedBytes() int64 { return a.bytesUnder(".") }

// replaced is what the regular files of the directory standing in repo's
// place hold (0 when none, or a link: a link is moved aside, not what it
// leads to), which a copy of repo replaces when it is published.
func (a *Agent) replaced(repo string) int64 {
	if fi, err := a.cache.Lstat(repo); err != nil || !fi.IsDir() {
		return 0
	}
	return a.bytesUnder(repo)
}

// bytesUnder is what the regular files under dir (in the cache root) hold.
func (a *Agent) bytesUnder(dir string) int64 {
	var used int64
	_ = fs.WalkDir(a.cache.FS(), dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				used += fi.Size()
			}
		}
		return nil
	})
	return used
}

package nodeagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"platformapi/resources"
)

// Names under the cache root and inside a cache directory.
const (
	partialDir = ".partial" // copies under way: .partial/<org>/<name>
	trashDir   = ".trash"   // what a removal renamed away, deleted next
	// CacheManifestName is the manifest of a published cache: its repo and
	// every file with size and sha256. Only a directory holding a valid
	// one counts as a ready cache.
	CacheManifestName = reservedPrefix + "cache.json"
	journalName       = reservedPrefix + "journal" // the verified files of a copy under way
	tempPrefix        = reservedPrefix + "tmp-"    // a file being written
	maxJournalBytes   = 64 << 20
)

// journalHeader is the first line of a journal: what the copy produces.
type journalHeader struct {
	Repo       string `json:"repo"`
	Source     string `json:"source"`
	BytesTotal int64  `json:"bytes_total"`
}

// cacheManifest is the content of CacheManifestName.
type cacheManifest struct {
	Repo       string  `json:"repo"`
	Source     string  `json:"source"`
	BytesTotal int64   `json:"bytes_total"`
	Files      []entry `json:"files"`
}

// journal appends verified files to a copy's journal, one JSON line each,
// synced before add returns. A torn last line is ignored when read.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

// readJournal reads the journal of the copy in dir: its header and its
// entries (none when there is no journal or its header is unreadable).
func (a *Agent) readJournal(dir string) (journalHeader, []entry) {
	var h journalHeader
	f, err := a.cache.Open(path.Join(dir, journalName))
	if err != nil {
		return h, nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJournalBytes))
	if err != nil {
		return h, nil
	}
	lines := bytes.Split(b, []byte("\n"))
	if json.Unmarshal(lines[0], &h) != nil {
		return journalHeader{}, nil
	}
	var out []entry
	for _, l := range lines[1:] {
		var e entry
		if json.Unmarshal(l, &e) == nil && checkRelPath(e.Path) == nil {
			out = append(out, e)
		}
	}
	return h, out
}

// openJournal writes a new journal for dir atomically (header, then kept)
// and opens it for appending.
func (a *Agent) openJournal(dir string, h journalHeader, kept []entry) (*journal, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one value per line
	_ = enc.Encode(h)
	for _, e := range kept {
		_ = enc.Encode(e)
	}
	name := path.Join(dir, journalName)
	if err := a.writeAtomic(name, buf.Bytes()); err != nil {
		return nil, err
	}
	f, err := a.cache.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open the journal %s: %w", name, err)
	}
	return &journal{f: f}, nil
}

// add records e as verified.
func (j *journal) add(e entry) error {
	line, _ := json.Marshal(e)
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("append to the journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync the journal: %w", err)
	}
	return nil
}

func (j *journal) close() { _ = j.f.Close() }

// writeAtomic writes data to name under the cache root through a
// temporary file, synced, then renamed over name.
func (a *Agent) writeAtomic(name string, data []byte) error {
	tmp := tempName(name)
	f, err := a.cache.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = a.cache.Rename(tmp, name)
	}
	if err != nil {
		_ = a.cache.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// tempName is where name is written before it is renamed into place.
func tempName(name string) string {
	return path.Join(path.Dir(name), tempPrefix+path.Base(name))
}

// hasFile reports whether name is a regular file of size bytes under the
// cache root.
func (a *Agent) hasFile(name string, size int64) bool {
	fi, err := a.cache.Lstat(name)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == size
}

// hostPath is where repo's cache lives on the node.
func (a *Agent) hostPath(repo string) string {
	return filepath.Join(a.cachePath, filepath.FromSlash(repo))
}

func validDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func agentFile(e entry) resources.AgentFile {
	return resources.AgentFile{Path: e.Path, SizeBytes: e.Size, SHA256: e.SHA256}
}

func sortFiles(fs []resources.AgentFile) {
	slices.SortFunc(fs, func(a, b resources.AgentFile) int { return strings.Compare(a.Path, b.Path) })
}

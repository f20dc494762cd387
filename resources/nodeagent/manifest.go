package nodeagent

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"platformapi/resources"
)

// Limits of a central copy's manifest.
const (
	maxManifestBytes = 16 << 20
	maxManifestFiles = 100_000
)

// reservedPrefix starts the names the agent keeps beside a cache's files
// (its journal, its manifest, its temporary files); no listed file may use it.
const reservedPrefix = ".platformapi-"

// entry is one file of a central copy: its path relative to the copy, its
// size in the store and the sha256 the manifest gives.
type entry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size_bytes"`
	SHA256 string `json:"sha256"`
}

// plan is what a copy must produce: the central copy's files.
type plan struct {
	source string  // store-relative path of the central copy
	files  []entry // in manifest order
	total  int64
}

// invalidCopy is the refusal of a central copy that cannot be used.
func invalidCopy(format string, args ...any) *resources.Error {
	return resources.Errorf(resources.KindConflict, resources.CodeCentralCopyInvalid, format, args...)
}

// parseManifest reads a sha256sum-format manifest: one `<64 hex>  <path>`
// (or `<64 hex> *<path>`) per line, GNU escapes (`\` first, `\\`, `\n`)
// understood, blank lines skipped. A leading "./" is dropped; a path must
// then be clean and relative, and listed once. A line naming the manifest
// itself is skipped (it cannot hold its own digest).
func parseManifest(r io.Reader) ([]entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	var out []entry
	seen := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			return nil, invalidCopy("%s line %d: %s", resources.CentralManifestName, n, err)
		}
		if e.Path == resources.CentralManifestName {
			continue
		}
		if seen[e.Path] {
			return nil, invalidCopy("%s lists %q twice", resources.CentralManifestName, e.Path)
		}
		seen[e.Path] = true
		if out = append(out, e); len(out) > maxManifestFiles {
			return nil, invalidCopy("%s lists more than %d files", resources.CentralManifestName,
				maxManifestFiles)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, invalidCopy("%s cannot be read: %s", resources.CentralManifestName, err)
	}
	if len(out) == 0 {
		return nil, invalidCopy("%s lists no files", resources.CentralManifestName)
	}
	return out, checkNesting(out)
}

// parseLine reads one manifest line.
func parseLine(line string) (entry, error) {
	escaped := strings.HasPrefix(line, `\`)
	line = strings.TrimPrefix(line, `\`)
	sum, name, ok := strings.Cut(line, " ")
	if !ok || len(sum) != 64 || (!strings.HasPrefix(name, " ") && !strings.HasPrefix(name, "*")) {
		return entry{}, errors.New("not `<64 hex digits>  <path>`")
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return entry{}, errors.New("the digest is not 64 hex digits")
	}
	name = name[1:]
	if escaped {
		name = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r").Replace(name)
	}
	name = strings.TrimPrefix(name, "./")
	if err := checkRelPath(name); err != nil {
		return entry{}, fmt.Errorf("path %q: %w", name, err)
	}
	return entry{Path: name, SHA256: strings.ToLower(sum)}, nil
}

// checkRelPath refuses a path that is not clean and relative, climbs with
// "..", or uses a name the agent reserves.
func checkRelPath(p string) error {
	switch {
	case p == "" || p == "." || path.IsAbs(p) || path.Clean(p) != p:
		return errors.New("not a clean relative path")
	case p == ".." || strings.HasPrefix(p, "../"):
		return errors.New("leads out of the central copy")
	case strings.ContainsRune(p, 0):
		return errors.New("holds a NUL byte")
	}
	for _, part := range strings.Split(p, "/") {
		if strings.HasPrefix(part, reservedPrefix) {
			return fmt.Errorf("names starting with %q are the agent's own", reservedPrefix)
		}
	}
	return nil
}

// checkNesting refuses a manifest listing a path both as a file and as a
// directory of another file.
func checkNesting(files []entry) error {
	names := make(map[string]bool, len(files))
	for _, e := range files {
		names[e.Path] = true
	}
	for _, e := range files {
		for dir := path.Dir(e.Path); dir != "."; dir = path.Dir(dir) {
			if names[dir] {
				return invalidCopy("%s lists %q as a file and as a directory", resources.CentralManifestName, dir)
			}
		}
	}
	return nil
}

// readPlan reads the central copy at source: its manifest, and for each
// listed file its size, refusing a file that is missing, not a regular
// file, or behind a link leading out of the store root.
func (a *Agent) readPlan(source string) (*plan, error) {
	b, err := a.readStoreFile(source, resources.CentralManifestName, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	files, err := parseManifest(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	p := &plan{source: source, files: files}
	for i := range p.files {
		fi, err := a.store.Stat(path.Join(source, p.files[i].Path))
		if err != nil {
			return nil, storeFileError(source, p.files[i].Path, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, invalidCopy("%q listed in %s is not a regular file", p.files[i].Path,
				resources.CentralManifestName)
		}
		p.files[i].Size = fi.Size()
		p.total += fi.Size()
	}
	return p, nil
}

// readStoreFile reads a small file of the central copy at source (at most
// limit bytes).
func (a *Agent) readStoreFile(source, name string, limit int64) ([]byte, error) {
	f, err := a.store.Open(path.Join(source, name))
	if err != nil {
		return nil, storeFileError(source, name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		return nil, invalidCopy("%s of the central copy %s is not a regular file", name, source)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, storeFileError(source, name, err)
	}
	if int64(len(b)) > limit {
		return nil, invalidCopy("%s of the central copy %s is larger than %d bytes", name, source, limit)
	}
	return b, nil
}

// storeFileError explains why a file of the central copy at source cannot
// be used.
func storeFileError(source, name string, err error) *resources.Error {
	if errors.Is(err, fs.ErrNotExist) {
		return invalidCopy("the central copy %s has no %q", source, name)
	}
	return invalidCopy("%q of the central copy %s cannot be read inside the store root "+
		"(a link leading out of it, or no permission)", name, source)
}

package nodeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"platformapi/resources"
)

// WriteCentralCopy lays out a model's central copy as the central store
// keeps it: files (relative '/'-separated paths → bytes) under
// <storeRoot>/<source>/ and their resources.CentralManifestName, the
// `sha256sum` listing the agent copies by. It is what the store's sync
// writes when weights arrive; the demo fleet and tests use it. Existing
// files are replaced; the manifest is written last.
func WriteCentralCopy(storeRoot, source string, files map[string][]byte) error {
	if _, err := resources.AgentSource(source); err != nil {
		return err
	}
	dir := filepath.Join(storeRoot, filepath.FromSlash(source))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("central copy %s: %w", source, err)
	}
	var sums strings.Builder
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if path.Clean(name) != name || strings.HasPrefix(name, "../") || path.IsAbs(name) || name == ".." {
			return fmt.Errorf("central copy %s: %q is not a clean relative path", source, name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("central copy %s: %w", source, err)
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return fmt.Errorf("central copy %s: %w", source, err)
		}
		sum := sha256.Sum256(files[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	if err := os.WriteFile(filepath.Join(dir, resources.CentralManifestName), []byte(sums.String()), 0o644); err != nil {
		return fmt.Errorf("central copy %s: %w", source, err)
	}
	return nil
}

package nodeagent

import (
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"platformapi/resources"
)

// keyRecheck is how long the agent trusts the key it read from the key
// file before reading the file again (a rotation needs no restart).
const keyRecheck = time.Second

// nodeKeyLen is the length of a node key: the prefix and 43 base64url
// characters (an HMAC-SHA256).
var nodeKeyLen = len(resources.NodeKeyPrefix) + base64.RawURLEncoding.EncodedLen(32)

// validKey reports whether s looks like a node key (resources.DeriveNodeKey).
func validKey(s string) bool {
	if len(s) != nodeKeyLen || !strings.HasPrefix(s, resources.NodeKeyPrefix) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s[len(resources.NodeKeyPrefix):])
	return err == nil && len(b) == 32
}

// keyring holds the node key the agent accepts: a fixed one, or the one in
// a file, read again at most once per keyRecheck. A file that stops
// holding a valid key makes every request refused until it holds one
// again. It never logs a key.
type keyring struct {
	file string
	log  *slog.Logger

	mu      sync.Mutex
	key     string // "" refuses every key
	checked time.Time
}

// newKeyring reads the key (from file unless key is given); a key that
// does not look like a node key is refused.
func newKeyring(key, file string, log *slog.Logger) (*keyring, error) {
	k := &keyring{file: file, log: log, key: key, checked: time.Now()}
	if key == "" && file != "" {
		var err error
		if k.key, err = readKeyFile(file); err != nil {
			return nil, err
		}
	}
	if !validKey(k.key) {
		return nil, fmt.Errorf("the node key must look like %s followed by 43 base64url characters "+
			"(platformapi portal node-key prints it)", resources.NodeKeyPrefix)
	}
	return k, nil
}

// readKeyFile reads and trims the key file; a file holding no valid key is
// an error that never quotes the file's content.
func readKeyFile(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("read the node key file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read the node key file %s: %w", file, err)
	}
	key := strings.TrimSpace(string(b))
	if !validKey(key) {
		return "", fmt.Errorf("the node key file %s holds no node key (%s followed by 43 base64url characters)",
			file, resources.NodeKeyPrefix)
	}
	return key, nil
}

// current is the key accepted now.
func (k *keyring) current() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file == "" || time.Since(k.checked) < keyRecheck {
		return k.key
	}
	k.checked = time.Now()
	key, err := readKeyFile(k.file)
	switch {
	case err != nil && k.key != "":
		k.log.Error("the node key file no longer holds a usable key: every request is refused until it does",
			"error", err)
	case err == nil && key != k.key:
		k.log.Info("node key changed: the previous key is refused from now on", "key_file", k.file)
	}
	k.key = key // "" when unreadable: fail closed
	return k.key
}

// accepts reports whether the request carries the current key (compared
// in constant time) in its one Authorization header.
func (k *keyring) accepts(r *http.Request) bool {
	if len(r.Header.Values("Authorization")) != 1 {
		return false
	}
	given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	want := k.current()
	given = strings.TrimSpace(given)
	return ok && want != "" && subtle.ConstantTimeCompare([]byte(given), []byte(want)) == 1
}

// requireKey answers 401 node_key_invalid to a request without the key.
func (a *Agent) requireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.keys.accepts(r) {
			a.log.Warn("node key refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			writeProblem(w, resources.Errorf(resources.KindUnauthorized, CodeNodeKeyInvalid,
				"send the node's key: Authorization: Bearer pnk_…"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

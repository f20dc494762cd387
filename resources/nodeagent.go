package resources

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// Node agent problem and operation-error codes.
const (
	// CodeNodeAgentUnreachable ends a cache operation whose node agent could
	// not be reached (network, timeout, 5xx, a refused node key) through
	// every retry.
	CodeNodeAgentUnreachable = "node_agent_unreachable"
	// CodeChecksumMismatch ends a copy whose copied file's sha256 differs
	// from the central copy's manifest: nothing became ready.
	CodeChecksumMismatch = "checksum_mismatch"
	// CodeInsufficientDisk ends a copy (before its first byte) whose bytes
	// do not fit in what the node's cache may still use.
	CodeInsufficientDisk = "insufficient_disk"
	// CodeNodeAgentNotEnrolled (409) refuses a cache write on a node that
	// has no agent_url in the inventory or no node key.
	CodeNodeAgentNotEnrolled = "node_agent_not_enrolled"
	// CodeCentralCopyInvalid ends a copy whose central copy cannot be used:
	// no SHA256SUMS manifest, a malformed one, or a listed file missing.
	CodeCentralCopyInvalid = "central_copy_invalid"
	// CodeCopyCancelled ends a copy that a removal of its cache stopped.
	CodeCopyCancelled = "copy_cancelled"
	// CodeNodeAgentRefused ends a cache operation the node agent refused
	// for another reason, which the detail gives.
	CodeNodeAgentRefused = "node_agent_refused"
	// CodeNodeKeyRefused is why a cache operation is retried whose node
	// agent refused the node key (401): the agent holds another key than
	// the one the server derives (a rotation not yet copied to the node).
	// Its tries spent, the operation fails CodeNodeAgentUnreachable.
	CodeNodeKeyRefused = "node_key_refused"
)

// NodeCacheMissing is the status of a cache the database knew as ready
// that its node's agent no longer reports (deleted by hand, disk replaced).
const NodeCacheMissing = "missing"

// States of a cache as a node agent reports it.
const (
	AgentCacheCopying = "copying" // queued or copying (bytes_done tells which)
	AgentCacheReady   = "ready"   // every file verified and published
	AgentCacheFailed  = "failed"  // the copy stopped; Error says why
	// AgentCacheVerifying is a cache directory found on disk that the
	// agent did not publish itself since it started: its files are being
	// hashed against the central copy's SHA256SUMS. Never adopted.
	AgentCacheVerifying = "verifying"
	// AgentCacheCorrupt is a found cache whose files do not match the
	// central copy (a sha256 or the list of files differs; Error, code
	// checksum_mismatch, names the file). Never adopted; a ready cache
	// reported corrupt turns missing.
	AgentCacheCorrupt = "corrupt"
	// AgentCacheUnverifiable is a found cache that cannot be checked: the
	// central copy its manifest names has no usable SHA256SUMS under the
	// store root (Error, code central_copy_invalid, says why). Never
	// adopted.
	AgentCacheUnverifiable = "unverifiable"
)

// CentralManifestName is the manifest of a central copy: the output of
// `sha256sum` over its files (`<hex>  <relative path>` per line), written
// when the weights arrive in the central store. A node agent copies only
// the files it lists and checks each against it.
const CentralManifestName = "SHA256SUMS"

// AgentFile is one verified file of a cache.
type AgentFile struct {
	Path      string `json:"path"` // relative to the cache directory, '/'-separated
	SizeBytes int64  `json:"size_bytes"`
	SHA256    string `json:"sha256"` // lower-case hex
}

// AgentCache is one cache as its node agent reports it.
type AgentCache struct {
	Repo  string `json:"repo"`
	State string `json:"state"` // one of the AgentCache* states
	Path  string `json:"path"`  // the cache directory on the node: <cache-root>/org/name
	// Source is the central copy (its path relative to the store root) the
	// cache is copied from and verified against; empty from agents that
	// predate it, whose caches are never adopted.
	Source     string      `json:"source,omitempty"`
	BytesDone  int64       `json:"bytes_done"`
	BytesTotal int64       `json:"bytes_total"`
	Files      []AgentFile `json:"files"` // files verified so far (all of them when ready)
	// Error says why a copy failed, or why a found cache is corrupt or
	// unverifiable.
	Error *OperationError `json:"error,omitempty"`
}

// AgentFS is the cache file system of a node.
type AgentFS struct {
	TotalBytes int64 `json:"total_bytes"`
	FreeBytes  int64 `json:"free_bytes"` // available to the agent's user
}

// AgentReport is a node agent's whole answer: its file system, its limit
// and every cache it holds or is copying.
type AgentReport struct {
	FS            AgentFS      `json:"fs"`
	MaxCacheBytes *int64       `json:"max_cache_bytes"` // --max-cache-bytes; nil: no cap
	UsedBytes     int64        `json:"used_bytes"`      // bytes under the cache root
	Caches        []AgentCache `json:"caches"`
}

// AgentEndpoint is how to reach one node's agent: its URL from the
// inventory and its node key.
type AgentEndpoint struct {
	Hostname string
	URL      string
	Key      string
}

// ErrNodeAgentUnreachable wraps every failure to get an answer from a node
// agent: network, timeout, a 5xx, a refused node key, an answer the client
// does not understand. Refusals the agent explains come back as *Error
// with the agent's code instead.
var ErrNodeAgentUnreachable = errors.New("node agent unreachable")

// AgentUnreachableError is a failure to get a usable answer from a node's
// agent; it wraps ErrNodeAgentUnreachable and its text starts with it (the
// cache jobs count their unreachable tries by that text). URL is the
// agent's address without user information, query or fragment; Why never
// quotes a request header, so no node key.
type AgentUnreachableError struct {
	Hostname   string
	URL        string
	Why        string
	KeyRefused bool // the agent answered 401: it holds another node key
}

// Error implements error.
func (e *AgentUnreachableError) Error() string {
	return ErrNodeAgentUnreachable.Error() + ": node " + e.Hostname + ": " + e.Why
}

// Unwrap makes errors.Is(err, ErrNodeAgentUnreachable) hold.
func (e *AgentUnreachableError) Unwrap() error { return ErrNodeAgentUnreachable }

// Retry is why an operation driving this agent waits to try again: its
// code and, for an operator, what happened and what to do.
func (e *AgentUnreachableError) Retry() (code, reason string) {
	at := "at " + e.URL
	if e.URL == "" {
		at = "at its agent_url"
	}
	if e.KeyRefused {
		return CodeNodeKeyRefused, fmt.Sprintf("the node agent of %s %s refused the node key (401): it "+
			"holds another key than the server's (after a rotation, put the printed key in its "+
			"--key-file; it reads it within a second). Lost the key? Re-enrol: platformapi portal "+
			"node-key %s --as EMAIL, then put the new key there", e.Hostname, at, e.Hostname)
	}
	return CodeNodeAgentUnreachable, fmt.Sprintf("the node agent of %s %s did not answer usably (%s): "+
		"check that it runs and that the server reaches that address (agent_url in the inventory)",
		e.Hostname, at, e.Why)
}

// NodeAgentClient speaks the node agent's protocol. Copy starts (or joins,
// or resumes) the copy of repo from source (a path relative to the agent's
// store root) and answers the cache's state; a copy that cannot start
// answers *Error (CodeInsufficientDisk with the bytes in its detail,
// CodeCentralCopyInvalid, …). Cache answers nil when the agent holds
// nothing of repo. Remove deletes the cache (and stops its copy); removing
// what is not there succeeds.
type NodeAgentClient interface {
	Report(ctx context.Context, ep AgentEndpoint) (AgentReport, error)
	Copy(ctx context.Context, ep AgentEndpoint, repo, source string) (AgentCache, error)
	Cache(ctx context.Context, ep AgentEndpoint, repo string) (*AgentCache, error)
	Remove(ctx context.Context, ep AgentEndpoint, repo string) error
}

// NodeKeyPrefix starts every node key.
const NodeKeyPrefix = "pnk_"

// DeriveNodeKey is the node key of hostname for one enrolment: an HMAC
// under the server's token pepper of the hostname and the enrolment's
// random nonce. The database keeps only the nonce, so neither a dump nor a
// log holds a key; rotating draws a new nonce.
func DeriveNodeKey(p Pepper, hostname string, nonce []byte) string {
	m := hmac.New(sha256.New, p)
	m.Write([]byte("platformapi node key v1\x00" + hostname + "\x00"))
	m.Write(nonce)
	return NodeKeyPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// AgentSource is the store-relative path of a model's central copy: its
// nas_path without the leading '/'. A path that is empty, holds '..' or a
// backslash, or is not clean is refused.
func AgentSource(nasPath string) (string, error) {
	rel := strings.TrimPrefix(nasPath, "/")
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || path.Clean(rel) != rel ||
		rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") {
		return "", Errorf(KindConflict, CodeCentralCopyInvalid, "the central copy's path %q is not a clean relative path", nasPath)
	}
	return rel, nil
}

// NodeAgentEnrolment is what the roster knows of one node's agent: where
// it listens and the nonce its node key derives from.
type NodeAgentEnrolment struct {
	Hostname string
	URL      string
	KeyNonce []byte
}

// NodeAgentDirectory lists the enrolled nodes: those with an agent_url and
// a node key. Hostnames nil lists every enrolled node.
type NodeAgentDirectory interface {
	NodeAgentEnrolments(ctx context.Context, hostnames []string) ([]NodeAgentEnrolment, error)
}

// AgentReports is what the enrolled nodes' agents answered: Answered by
// hostname, and Silent, the enrolled nodes whose agent did not answer.
type AgentReports struct {
	Answered map[string]AgentReport
	Silent   map[string]bool
}

// NodeAgents reaches the agent of a roster node by hostname: its endpoint
// from the directory, its key derived from the pepper. Every method
// answers *Error CodeNodeAgentNotEnrolled for a node without an agent_url
// or a node key, and otherwise behaves as NodeAgentClient. Reports asks
// the enrolled nodes among hostnames (nil: all) at once, bounded by
// MonitoringTimeout (a report may be up to a few seconds old); when the
// enrolments cannot be read both of its maps are empty.
type NodeAgents interface {
	Report(ctx context.Context, hostname string) (AgentReport, error)
	Reports(ctx context.Context, hostnames []string) AgentReports
	Copy(ctx context.Context, hostname, repo, source string) (AgentCache, error)
	Remove(ctx context.Context, hostname, repo string) error
}

// NotEnrolled is the refusal of a cache write on a node whose agent cannot
// be reached because the roster lacks its agent_url or its node key.
func NotEnrolled(hostname string) *Error {
	return Errorf(KindConflict, CodeNodeAgentNotEnrolled, "AI node %q has no node agent enrolled: give it an "+
		"agent_url in the inventory and a node key (platformapi portal node-key %s --as EMAIL)", hostname, hostname)
}

// NodeKeyMint is a node key as `portal node-key` prints it, once: the
// server keeps only the nonce it derives from.
type NodeKeyMint struct {
	Hostname  string    `json:"hostname"`
	Key       string    `json:"node_key"`
	Rotated   bool      `json:"rotated"` // the node had a key, which stopped working
	CreatedAt time.Time `json:"created_at"`
}

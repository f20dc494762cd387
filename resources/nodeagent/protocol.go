package nodeagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"platformapi/resources"
)

// Paths of the agent's protocol.
const (
	PathHealth = "/healthz"    // liveness, no key needed
	PathStatus = "/v1/status"  // GET: the AgentReport
	PathCaches = "/v1/caches/" // + org/name: GET, PUT, DELETE one cache
)

// Problem codes only the agent's protocol answers (the shared ones are in
// package resources).
const (
	// CodeNodeKeyInvalid (401): the bearer node key is missing or not the
	// agent's.
	CodeNodeKeyInvalid = "node_key_invalid"
	// CodeCacheNotFound (404): the agent holds nothing of that repo.
	CodeCacheNotFound = "cache_not_found"
	// CodeInvalidRepo (422): the repo in the path is not org/name.
	CodeInvalidRepo = "invalid_repo"
	// CodeInvalidSource (422): source is empty, absolute, holds '..' or is
	// not a clean path.
	CodeInvalidSource = "invalid_source"
	// CodeCachePathInvalid (409): a directory the agent must use under its
	// cache root is a symbolic link or not a directory.
	CodeCachePathInvalid = "cache_path_invalid"
	// CodeCopyFailed ends a copy the agent could not write for a reason of
	// its own (its log says which); the verified files stay for a resume.
	CodeCopyFailed = "copy_failed"
	// CodeAgentStopping (503): the agent is shutting down.
	CodeAgentStopping = "agent_stopping"
	codeMalformedBody = "malformed_body"     // 400
	codeNotFound      = "not_found"          // 404: no such path
	codeMethod        = "method_not_allowed" // 405
	codeInternal      = "internal"           // 500
)

// problemTypePrefix starts the type of every problem the agent answers.
const problemTypePrefix = "urn:platformapi:node-agent:problem:"

// Problem is the RFC 9457 document of every refusal the agent answers.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
	// NeededBytes and FreeBytes come with CodeInsufficientDisk.
	NeededBytes *int64 `json:"needed_bytes,omitempty"`
	FreeBytes   *int64 `json:"free_bytes,omitempty"`
	// MaxCacheBytes comes with CodeInsufficientDisk when the agent's cap
	// (--max-cache-bytes), not its file system, leaves too little.
	MaxCacheBytes *int64 `json:"max_cache_bytes,omitempty"`
}

// CopyRequest is the body of PUT /v1/caches/{org}/{name}.
type CopyRequest struct {
	// Source is the central copy's path relative to the store root.
	Source string `json:"source"`
}

// diskError refuses a copy that does not fit; it carries both numbers and
// the cap when the cap is what limits (0: the file system).
type diskError struct {
	needed, free, cap int64
	err               *resources.Error
}

func (e *diskError) Error() string { return e.err.Error() }
func (e *diskError) Unwrap() error { return e.err }

// insufficientDisk builds the refusal of a copy needing needed bytes where
// free are left under the cap capBytes (0: on the file system).
func insufficientDisk(repo string, needed, free, capBytes int64) *diskError {
	where := "on the cache file system"
	if capBytes > 0 {
		where = fmt.Sprintf("under the --max-cache-bytes cap of %d", capBytes)
	}
	return &diskError{needed: needed, free: free, cap: capBytes, err: resources.Errorf(resources.KindConflict,
		resources.CodeInsufficientDisk, "%s needs %d bytes in the cache, %d are free %s",
		repo, needed, free, where)}
}

// kindStatus maps a domain error kind to the agent's HTTP status.
var kindStatus = map[resources.Kind]int{
	resources.KindBadRequest:   http.StatusBadRequest,
	resources.KindUnauthorized: http.StatusUnauthorized,
	resources.KindNotFound:     http.StatusNotFound,
	resources.KindConflict:     http.StatusConflict,
	resources.KindInvalid:      http.StatusUnprocessableEntity,
	resources.KindUnavailable:  http.StatusServiceUnavailable,
}

// problemFor turns err into the problem the agent answers: an explained
// refusal for a *resources.Error, else a bare 500 (the cause is logged by
// the caller, never written).
func problemFor(err error) Problem {
	p := Problem{Status: http.StatusInternalServerError, Code: codeInternal,
		Detail: "the node agent failed; its log says why"}
	if e, ok := resources.AsError(err); ok && kindStatus[e.Kind] != 0 {
		p = Problem{Status: kindStatus[e.Kind], Code: e.Code, Detail: e.Detail}
	}
	var d *diskError
	if errors.As(err, &d) {
		p.NeededBytes, p.FreeBytes = &d.needed, &d.free
		if d.cap > 0 {
			p.MaxCacheBytes = &d.cap
		}
	}
	p.Type, p.Title = problemTypePrefix+p.Code, http.StatusText(p.Status)
	return p
}

// writeProblem writes err as a problem document.
func writeProblem(w http.ResponseWriter, err error) { writeProblemDoc(w, problemFor(err)) }

// writeProblemDoc writes p.
func writeProblemDoc(w http.ResponseWriter, p Problem) {
	p.Type, p.Title = problemTypePrefix+p.Code, http.StatusText(p.Status)
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="platformapi-node-agent"`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON writes v as the JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

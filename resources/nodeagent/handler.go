package nodeagent

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"

	"platformapi/resources"
)

// maxRequestBody bounds a PUT body.
const maxRequestBody = 64 << 10

// serveStatus answers GET /v1/status.
func (a *Agent) serveStatus(w http.ResponseWriter, _ *http.Request) {
	if a.isClosed() {
		writeProblem(w, stopping)
		return
	}
	r, err := a.report()
	if err != nil {
		a.fail(w, "status", err)
		return
	}
	writeJSON(w, http.StatusOK, r)
}

// serveCache answers GET /v1/caches/{org}/{name}.
func (a *Agent) serveCache(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("org") + "/" + r.PathValue("name")
	if err := checkRepo(repo); err != nil {
		writeProblem(w, err)
		return
	}
	if a.isClosed() {
		writeProblem(w, stopping)
		return
	}
	c := a.lookup(repo)
	if c == nil {
		writeProblem(w, resources.NotFound(CodeCacheNotFound, "the node holds no cache of %s", repo))
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// serveCopy answers PUT /v1/caches/{org}/{name}: 202 with the copy
// started, joined or resumed, 200 with the cache ready (or a failure not
// yet reported).
func (a *Agent) serveCopy(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("org") + "/" + r.PathValue("name")
	req, err := decodeCopy(r)
	if err == nil {
		err = checkRepo(repo)
	}
	if err != nil {
		writeProblem(w, err)
		return
	}
	c, accepted, err := a.startCopy(repo, req.Source)
	if err != nil {
		a.fail(w, "copy "+repo, err)
		return
	}
	status := http.StatusOK
	if accepted {
		status = http.StatusAccepted
	}
	writeJSON(w, status, c)
}

// decodeCopy reads a PUT body: one JSON object with no unknown member.
func decodeCopy(r *http.Request) (CopyRequest, error) {
	var req CopyRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		return req, nil
	}
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		return req, resources.Invalid(m[1], resources.CodeValidationFailed, "unknown member %q", m[1])
	}
	return req, resources.Errorf(resources.KindBadRequest, codeMalformedBody,
		`the body must be one JSON object: {"source": "<path in the store>"}`)
}

// unknownField finds the member encoding/json names in its unknown-field error.
var unknownField = regexp.MustCompile(`^json: unknown field "([^"]*)"$`)

// serveRemove answers DELETE /v1/caches/{org}/{name}: 204 once nothing of
// the repo is left (also when there was nothing).
func (a *Agent) serveRemove(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("org") + "/" + r.PathValue("name")
	if err := a.remove(repo); err != nil {
		a.fail(w, "remove "+repo, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cachePath matches the path of one cache (for 405 against 404).
var cachePath = regexp.MustCompile(`^/v1/caches/[^/]+/[^/]+$`)

// serveUnknown answers a path or method the protocol does not have.
func serveUnknown(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == PathStatus:
		w.Header().Set("Allow", "GET, HEAD")
	case cachePath.MatchString(r.URL.Path):
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
	default:
		writeProblemDoc(w, Problem{Status: http.StatusNotFound, Code: codeNotFound,
			Detail: "the node agent has no " + r.URL.Path})
		return
	}
	writeProblemDoc(w, Problem{Status: http.StatusMethodNotAllowed, Code: codeMethod,
		Detail: r.Method + " is not allowed on " + r.URL.Path})
}

// fail writes err; a fault of the agent's own is logged, not shown.
func (a *Agent) fail(w http.ResponseWriter, what string, err error) {
	if e, ok := resources.AsError(err); !ok || kindStatus[e.Kind] == 0 {
		a.log.Error(what, "error", err)
	}
	writeProblem(w, err)
}

func (a *Agent) isClosed() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.closed }

package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"platformapi/resources"
)

// Call is one read operation an adapter (the MCP tools) runs in-process for
// a caller it has authenticated and charged already.
type Call struct {
	Operation  string            // the operation id of a GET operation
	Path       map[string]string // path parameters by name, unescaped
	Query      url.Values        // query parameters, as a client would send them
	Credential *resources.Credential
	// Paid: the adapter took the call's two rate units; otherwise the
	// operation takes the second one.
	Paid bool
	// Rate holds the token's budget after the adapter's charge (what the
	// operation reports as the call's, e.g. GET /whoami); an operation that
	// takes a unit itself records the budget it leaves there. Nil: none.
	Rate *RateStatus
	// Budget bounds the answer in estimated tokens (ResultBudget); 0:
	// REST's defaults.
	Budget           int
	RemoteAddr, Host string // the caller's address and the host it addressed
}

// Answer is what an operation answered to a Call: exactly what REST sends.
type Answer struct {
	Status int
	Header http.Header
	Body   bytes.Buffer
}

// Invoke runs c's operation as REST serves it — Huma's middleware
// (permissions, result budget, audit, problem documents) and the operation
// — with its own access-log line and metrics, but without the router and
// the root chain's authentication and charge, which the adapter did for the
// whole call (the caller's context carries its request id, client address
// and deadline). Nothing is routed: the operation is found by name and its
// path parameters are set on the request as they are. An unknown or
// non-GET operation, or a missing path parameter, is an error of the
// adapter's (a 400 invalid_parameter for a missing one).
func (s *Server) Invoke(ctx context.Context, c Call) (*Answer, error) {
	run, ok := s.invokers[c.Operation]
	if !ok {
		return nil, fmt.Errorf("invoke %q: no such GET operation", c.Operation)
	}
	ctx = withCall(ctx, &c)
	r, err := s.callRequest(ctx, c)
	if err != nil {
		return nil, err
	}
	a := &Answer{Header: http.Header{}}
	run.ServeHTTP(answerWriter{a}, r)
	if a.Status == 0 { // nothing written: net/http would send 200
		a.Status = http.StatusOK
	}
	return a, nil
}

// callRequest is the GET of c: its operation's path with the parameters
// filled in (and set as the request's path values, escaped as a router
// would have them when the path needs escaping), the query, the caller's
// address and host.
func (s *Server) callRequest(ctx context.Context, c Call) (*http.Request, error) {
	path := s.opByID[c.Operation].Path
	escaped := path
	for name, v := range c.Path {
		if v != "" {
			path = strings.ReplaceAll(path, "{"+name+"}", v)
			escaped = strings.ReplaceAll(escaped, "{"+name+"}", url.PathEscape(v))
		}
	}
	if i := strings.IndexByte(path, '{'); i >= 0 { // a path parameter missing or empty
		name, _, _ := strings.Cut(path[i+1:], "}")
		detail := "the argument " + name + " is required"
		if _, given := c.Path[name]; given {
			detail = "the argument " + name + " must not be empty"
		}
		return nil, &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter,
			Field: name, Detail: detail}
	}
	u := &url.URL{Path: Prefix + path, RawQuery: c.Query.Encode()}
	if escaped != path {
		u.RawPath = Prefix + escaped
	}
	r := &http.Request{Method: http.MethodGet, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Accept": {"application/json"}}, Body: http.NoBody, Host: c.Host,
		RemoteAddr: c.RemoteAddr}
	r = r.WithContext(ctx)
	for name, v := range c.Path {
		if u.RawPath != "" {
			v = url.PathEscape(v)
		}
		r.SetPathValue(name, v)
	}
	return r, nil
}

// answerWriter is the http.ResponseWriter of an Invoke: it keeps the answer.
type answerWriter struct{ a *Answer }

// Header implements http.ResponseWriter.
func (w answerWriter) Header() http.Header { return w.a.Header }

// WriteHeader implements http.ResponseWriter; only the first status counts.
func (w answerWriter) WriteHeader(status int) {
	if w.a.Status == 0 {
		w.a.Status = status
	}
}

// Write implements http.ResponseWriter; writing first implies 200.
func (w answerWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.a.Body.Write(b)
}

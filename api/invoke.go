package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

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
	// Budget bounds the answer in estimated tokens (WithResultBudget); 0:
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

// Invoke runs c's operation as REST serves it, through the same router and
// middleware (permissions, result budget, audit, access log, problem
// documents), without its authentication and charge, which the adapter did
// for the whole call. The GET is routed afresh from the root: nothing of the
// adapter's own route carries over. The context's deadline and cancellation are the
// caller's. An unknown or non-GET operation, or a missing path parameter, is
// an error of the adapter's (a 400 invalid_parameter for a missing one).
func (s *Server) Invoke(ctx context.Context, c Call) (*Answer, error) {
	target, err := s.callTarget(c)
	if err != nil {
		return nil, err
	}
	ctx = WithAuthenticated(WithMCPTool(ctx, c.Operation, c.Paid), c.Credential)
	if c.Budget > 0 {
		ctx = WithResultBudget(ctx, c.Budget)
	}
	if c.Rate != nil {
		ctx = context.WithValue(ctx, keyRate, c.Rate)
	}
	// No route context: chi routes the GET from the root with one of its
	// pooled route contexts (a new one per call cost ~15 µs of an MCP call,
	// docs/benchmarks.md), not with the caller's.
	ctx = context.WithValue(ctx, chi.RouteCtxKey, (*chi.Context)(nil))
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", c.Operation, err)
	}
	r.RemoteAddr, r.Host = c.RemoteAddr, c.Host
	r.Header.Set("Accept", "application/json")
	a := &Answer{Header: http.Header{}}
	s.router.ServeHTTP(answerWriter{a}, r)
	if a.Status == 0 { // nothing written: net/http would send 200
		a.Status = http.StatusOK
	}
	return a, nil
}

// callTarget is the request line of c: its operation's path with the path
// parameters escaped into it, and the query.
func (s *Server) callTarget(c Call) (string, error) {
	op, ok := s.opByID[c.Operation]
	if !ok || op.Method != http.MethodGet {
		return "", fmt.Errorf("invoke %q: no such GET operation", c.Operation)
	}
	path := op.Path
	for name, v := range c.Path {
		if v != "" {
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
		}
	}
	if i := strings.IndexByte(path, '{'); i >= 0 { // a path parameter missing or empty
		name, _, _ := strings.Cut(path[i+1:], "}")
		return "", &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter,
			Field: name, Detail: "the argument " + name + " is required"}
	}
	target := Prefix + path
	if q := c.Query.Encode(); q != "" {
		target += "?" + q
	}
	return target, nil
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

package api

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"
)

func init() {
	// Huma forces these globals: every error it makes becomes a Problem, and
	// member names are matched exactly ("Name" is not "name").
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return newProblem(status, msg, errs...)
	}
	huma.NewErrorWithContext = func(_ huma.Context, status int, msg string, errs ...error) huma.StatusError {
		return newProblem(status, msg, errs...)
	}
	huma.ValidateStrictCasing = true
	// Our lists are never null: an empty list is [].
	huma.DefaultArrayNullable = false
}

// stampProblem is a Huma transformer: it completes every problem Huma writes
// (type, title, code, instance, request id), logs internal faults and sets
// WWW-Authenticate / Retry-After. It runs before the status is sent.
func (s *Server) stampProblem(ctx huma.Context, _ string, v any) (any, error) {
	p, ok := v.(*Problem)
	if !ok {
		return v, nil
	}
	id := RequestID(ctx.Context())
	u := ctx.URL()
	p.finish(u.EscapedPath(), id)
	p.log(ctx.Context(), loggerFrom(ctx.Context(), s.cfg.Logger))
	p.headers(ctx.SetHeader)
	return p, nil
}

// writeHuma writes err as a problem from inside a Huma middleware.
func (s *Server) writeHuma(ctx huma.Context, err error) {
	p, ok := asProblem(err)
	if !ok {
		p = faultProblem(err)
	}
	_ = huma.WriteErr(s.api, ctx, p.Status, p.Detail, p)
}

// WriteError writes err as a problem document outside Huma (router-level
// answers, the MCP transport).
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	p := s.ProblemFor(r, err)
	p.headers(w.Header().Set)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = JSONFormat.Marshal(w, p)
}

// ProblemFor converts any error into the finished problem document an
// adapter (MCP) reports, with the request's path and id.
func (s *Server) ProblemFor(r *http.Request, err error) *Problem {
	p, ok := asProblem(err)
	if !ok {
		p = faultProblem(err)
	}
	id := RequestID(r.Context())
	p.finish(r.URL.EscapedPath(), id)
	p.log(r.Context(), loggerFrom(r.Context(), s.cfg.Logger))
	return p
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	if allow := s.allowedMethods(r.URL.Path); allow != "" {
		w.Header().Set("Allow", allow)
	}
	s.WriteError(w, r, &Problem{Status: http.StatusMethodNotAllowed, Code: codeMethodNotAllowed,
		Detail: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)})
}

// routedMethods are the methods a path may allow, in the order Allow lists
// them.
var routedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete}

// allowedMethods lists the methods the router answers on path (HEAD with
// GET), for a 405's Allow header.
func (s *Server) allowedMethods(path string) string {
	var allow []string
	for _, m := range routedMethods {
		probe := m
		if m == http.MethodHead {
			probe = http.MethodGet // GetHead answers HEAD wherever GET is routed
		}
		if s.router.Match(chi.NewRouteContext(), probe, path) {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// recoverer turns a panic into a 500 problem; the panic is logged, not shown.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.WriteError(w, r, &Problem{Status: http.StatusInternalServerError, cause: fmt.Errorf("panic: %v\n%s", v, debug.Stack())})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// Request limits applied at the router, before anything reads a body, for
// /api/v1 and /mcp alike.
const (
	// MaxBodyBytes bounds every request body: 1 MiB.
	MaxBodyBytes = 1 << 20
	// DefaultRequestTimeout bounds a whole request when Config.RequestTimeout is 0.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultBodyReadTimeout bounds the arrival of a request body when
	// Config.BodyReadTimeout is 0.
	DefaultBodyReadTimeout = 10 * time.Second
)

// Codes of the request limits.
const (
	codeRequestTimeout = "request_timeout" // 408: the body did not arrive in time
)

// limits gives every request a deadline (its context ends after
// RequestTimeout) and bounds its body: larger than MaxBodyBytes is 413, a
// body still arriving after BodyReadTimeout is cut off (408). The paths
// outside the API switch get no deadline: they answer from memory (readyz
// bounds its own database check), and the AI gateway's verify, asked once
// per AI request, would pay a timer and a context for nothing.
func (s *Server) limits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.needsDeadline(r) {
			ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			if r.ContentLength > MaxBodyBytes {
				w.Header().Set("Connection", "close")
				s.WriteError(w, r, BodyReadError(&http.MaxBytesError{Limit: MaxBodyBytes}))
				return
			}
			r.Body = newDeadlineBody(w, r.Body, s.cfg.BodyReadTimeout)
		}
		next.ServeHTTP(w, r)
	})
}

// needsDeadline reports whether limits arms the request's deadline: not
// outside the API switch, and not for an in-process request (an MCP tool
// call) whose outer request's deadline comes earlier.
func (s *Server) needsDeadline(r *http.Request) bool {
	if outsideSwitch(r.URL.Path) {
		return false
	}
	dl, ok := r.Context().Deadline()
	return !ok || time.Until(dl) > s.cfg.RequestTimeout
}

// deadlineBody is a request body limited to MaxBodyBytes whose connection
// has a read deadline until the body ends. The deadline is cleared at the
// end so the server's own background read of an idle connection (which
// cancels the request's context when it fails) is never cut by it.
type deadlineBody struct {
	io.ReadCloser
	clear func()
	once  sync.Once
}

func newDeadlineBody(w http.ResponseWriter, body io.ReadCloser, timeout time.Duration) *deadlineBody {
	rc := http.NewResponseController(w)
	b := &deadlineBody{ReadCloser: http.MaxBytesReader(w, body, MaxBodyBytes), clear: func() {}}
	// An in-process request (an MCP tool call) has no connection to limit.
	if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
		b.clear = func() { _ = rc.SetReadDeadline(time.Time{}) }
	}
	return b
}

// Read reads the body; its end lifts the read deadline. After a failure the
// deadline stays, so the server's discarding of an unread rest ends at once
// and the connection is closed.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.clear)
	}
	return n, err
}

// BodyReadError is the problem for an error reading a request body: 413
// body_too_large past MaxBodyBytes, 408 request_timeout when the body did
// not arrive in time, else 422 malformed_body. Every adapter reading a body
// (REST, MCP) answers with it.
func BodyReadError(err error) *Problem {
	var tooLarge *http.MaxBytesError
	var nerr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return &Problem{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
			Detail: "the request body is larger than " + strconv.Itoa(MaxBodyBytes>>20) + " MiB"}
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout():
		return &Problem{Status: http.StatusRequestTimeout, Code: codeRequestTimeout, retryZero: true,
			Detail: "the request body did not arrive in time; send it at once"}
	}
	return &Problem{Status: http.StatusUnprocessableEntity, Code: CodeMalformedBody,
		Detail: "the request body could not be read"}
}

package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// StatusClientClosed is the status the access log and the metrics record
// for a request whose client hung up before the answer was complete
// (nginx's 499). It is never sent: nobody is left to receive it.
const StatusClientClosed = 499

// Operation labels of requests served outside Huma.
const (
	opHealthz   = "healthz"
	opReadyz    = "readyz"
	opMetrics   = "metrics"
	opMCP       = "mcp"
	opUnmatched = "unmatched"
)

// requestRecord collects what the access log and the metrics learn about a
// request while it is served; the Huma middleware, the authenticator and
// the MCP guard fill it in.
type requestRecord struct {
	mu        sync.Mutex
	operation string
	route     string // the operation's route pattern; "": the router's
	tokenID   int64
	mcpMethod string
	mcpTool   string
}

// recordFrom returns the access record of the request ctx belongs to, or
// nil outside an observed request.
func recordFrom(ctx context.Context) *requestRecord {
	if f := factsOf(ctx); f != nil && f.observed {
		return &f.rec
	}
	return nil
}

// noteOperation names the operation serving the request.
// NoteOperation labels the request of ctx with id in the access log and the
// metrics, for handlers mounted beside the API (the portal's pages).
func NoteOperation(ctx context.Context, id string) { noteOperation(ctx, id) }

func noteOperation(ctx context.Context, id string) {
	if r := recordFrom(ctx); r != nil {
		r.mu.Lock()
		r.operation = id
		r.mu.Unlock()
	}
}

// noteToken records the id of the token that authenticated the request.
func noteToken(ctx context.Context, id int64) {
	if r := recordFrom(ctx); r != nil {
		r.mu.Lock()
		r.tokenID = id
		r.mu.Unlock()
	}
}

// NoteMCP records on a POST /mcp request's access-log line its JSON-RPC
// method and, for tools/call, the tool's name (each cut to 64 bytes).
func NoteMCP(ctx context.Context, method, tool string) {
	if r := recordFrom(ctx); r != nil {
		r.mu.Lock()
		r.operation, r.mcpMethod, r.mcpTool = opMCP, clip(method, 64), clip(tool, 64)
		r.mu.Unlock()
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ClientGone reports whether the client of the request ctx belongs to hung
// up (its context was cancelled, not timed out).
func ClientGone(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// annotate is the first Huma middleware: it names the operation and its
// route pattern on the request's record (routed or run in-process).
func (s *Server) annotate(ctx huma.Context, next func(huma.Context)) {
	if r := recordFrom(ctx.Context()); r != nil {
		op := ctx.Operation()
		r.mu.Lock()
		r.operation, r.route = op.OperationID, Prefix+op.Path
		r.mu.Unlock()
	}
	next(ctx)
}

// observe writes one access-log line per request and counts it in the
// metrics: operation, method, route pattern, status, duration, bytes
// written, token id and, for MCP, the JSON-RPC method and tool. It never
// logs a header, the query or the body. A request whose client hung up is
// recorded with status 499 (not one answered 408, whose body stalled).
// Probes, scrapes and the AI gateway's verify log at debug level.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		f, r := observedFacts(r)
		rec := &f.rec
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		// A 408 is the server cutting off a stalled body: the failed read
		// cancelled the context, but the client is there and gets the 408.
		if ClientGone(r.Context()) && status != http.StatusRequestTimeout {
			status = StatusClientClosed
		}
		s.recordRequest(r, rec, status, ww.BytesWritten(), time.Since(start))
	})
}

// routeName is the operation label of a plain route (one Huma does not
// declare as an operation): its pattern under the API prefix in kebab case
// (/api/v1/openapi.json: openapi-json), so every label is a name, never a
// path.
func routeName(pattern string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(strings.TrimPrefix(pattern, Prefix)))
	for strings.Contains(name, "--") {
		name = strings.ReplaceAll(name, "--", "-")
	}
	return strings.Trim(name, "-")
}

// operationLabel is the operation label of a request: the operation that
// noted itself, else a plain route's name, else unmatched.
func operationLabel(op, route string) string {
	if op == "" && !strings.HasSuffix(route, "*") {
		op = routeName(route) // a plain route: the OpenAPI document, the docs
	}
	if op == "" {
		op = opUnmatched
	}
	return op
}

// recordRequest writes the access-log line and updates the metrics.
func (s *Server) recordRequest(r *http.Request, rec *requestRecord, status, bytes int, d time.Duration) {
	rec.mu.Lock()
	op, route, token, method, tool := rec.operation, rec.route, rec.tokenID, rec.mcpMethod, rec.mcpTool
	rec.mu.Unlock()
	if rc := chi.RouteContext(r.Context()); route == "" && rc != nil {
		route = rc.RoutePattern()
	}
	op = operationLabel(op, route)
	s.metrics.observe(op, status, d)
	level := slog.LevelInfo
	if op == opHealthz || op == opReadyz || op == opMetrics || op == opGatewayVerify {
		level = slog.LevelDebug // machines asking many times a second; counted in the metrics
	}
	h := s.cfg.Logger.Handler()
	if !h.Enabled(r.Context(), level) {
		return
	}
	// Room for every member a line can have, so the list stays on the stack.
	attrs := make([]slog.Attr, 0, 14)
	attrs = append(attrs, slog.String("request_id", RequestID(r.Context())),
		slog.String("operation", op), slog.String("method", r.Method),
		slog.String("route", route), slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int("bytes", bytes),
		slog.String("client", ClientAddr(r).String()))
	attrs = appendExtraAttrs(attrs, r, token, method, tool, status)
	// The record is built here, without the caller's program counter that
	// Logger.LogAttrs looks up on every call (no handler here adds the
	// source; the line's origin is this function anyway).
	line := slog.NewRecord(time.Now(), level, "request", 0)
	line.AddAttrs(attrs...)
	_ = h.Handle(r.Context(), line)
}

// appendExtraAttrs appends to attrs the access-log members only some
// requests have.
func appendExtraAttrs(attrs []slog.Attr, r *http.Request, token int64, method, tool string,
	status int) []slog.Attr {
	if token != 0 {
		attrs = append(attrs, slog.String("token_id", strconv.FormatInt(token, 10)))
	}
	if tool := MCPTool(r.Context()); tool != "" { // an in-process tool call
		attrs = append(attrs, slog.String("mcp_tool", tool))
	}
	if method != "" {
		attrs = append(attrs, slog.String("mcp_method", method))
		if tool != "" {
			attrs = append(attrs, slog.String("mcp_tool", tool))
		}
	}
	if status == StatusClientClosed {
		attrs = append(attrs, slog.Bool("client_closed", true))
	}
	return attrs
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"platformapi/api"
)

// handler answers a tools/call of spec by serving the equivalent GET through
// the root router in-process, with the caller's bearer token and address:
// authentication, permissions, rate limit (2 units), audit and problem
// documents are exactly those of REST.
func (m *MCP) handler(spec toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decodeArgs(req)
		if err != nil {
			return m.errorResult(ctx, err), nil
		}
		target, err := spec.target(args)
		if err != nil {
			return m.errorResult(ctx, err), nil
		}
		rec, err := m.serveInner(ctx, spec.tool.Name, target)
		if err != nil {
			return m.errorResult(ctx, err), nil
		}
		return toolResult(rec), nil
	}
}

// serveInner serves GET target through the root router and records the
// answer. The context keeps the outer request id (the request-id middleware
// reuses it) and is marked as an MCP tool call (2 rate-limit units). Chi's
// route context of POST /mcp is cleared: chi would otherwise reuse it and
// route the GET as a POST.
func (m *MCP) serveInner(ctx context.Context, tool, target string) (*recorder, error) {
	outer, ok := outerFrom(ctx)
	if !ok {
		return nil, errors.New("tools: tool call without its POST /mcp request") // an internal fault
	}
	ctx = api.WithMCPTool(ctx, tool)
	ctx = context.WithValue(ctx, chi.RouteCtxKey, nil)
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	r.RemoteAddr, r.Host = outer.remoteAddr, outer.host
	if outer.authorization != "" {
		r.Header.Set("Authorization", outer.authorization)
	}
	r.Header.Set("Accept", "application/json")
	rec := newRecorder()
	m.srv.Router().ServeHTTP(rec, r)
	return rec, nil
}

// toolResult converts the recorded REST answer. A 2xx JSON object becomes
// structured content whose text is the exact body; any other 2xx body is
// text. Anything else is a tool error: the problem document as text and,
// when it is a JSON object, as structured content.
func toolResult(rec *recorder) *mcp.CallToolResult {
	body := rec.body.Bytes()
	obj := jsonObject(body)
	if rec.status == 0 { // nothing written: net/http would send 200
		rec.status = http.StatusOK
	}
	if rec.status >= 200 && rec.status < 300 {
		if obj != nil {
			return mcp.NewToolResultStructured(obj, string(body))
		}
		return mcp.NewToolResultText(string(body))
	}
	res := mcp.NewToolResultError(string(body))
	if obj != nil {
		res.StructuredContent = obj
	}
	return res
}

// errorResult reports an error found before the REST request could be made
// as a tool error carrying the problem document, encoded as REST encodes it.
// Its instance is the path of the MCP endpoint.
func (m *MCP) errorResult(ctx context.Context, err error) *mcp.CallToolResult {
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, Path, nil) // a constant, valid target
	p := m.srv.ProblemFor(r, err)
	var body bytes.Buffer
	if merr := huma.DefaultJSONFormat.Marshal(&body, p); merr != nil {
		return mcp.NewToolResultError(p.Error())
	}
	res := mcp.NewToolResultError(body.String())
	res.StructuredContent = jsonObject(body.Bytes())
	return res
}

// jsonObject decodes body when it is one JSON object (numbers kept exact),
// else returns nil.
func jsonObject(body []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || dec.More() {
		return nil
	}
	return obj
}

// recorder is a minimal http.ResponseWriter that keeps an in-process
// answer: status, headers and body.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

// Header implements http.ResponseWriter.
func (r *recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; only the first status counts.
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// Write implements http.ResponseWriter; writing first implies 200.
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

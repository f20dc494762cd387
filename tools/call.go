package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"platformapi/api"
	"platformapi/resources"
)

// handler answers a tools/call of spec by serving the equivalent GET through
// the root router in-process, with the caller's credential (authenticated
// once, by the POST's guard) and address: permissions, rate limit, audit and
// problem documents are exactly those of REST. The result is bounded by the
// call's budget (api.DefaultPageBudget for a list called without limit,
// api.MaxResultBudget otherwise).
func (m *MCP) handler(spec toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if outer, ok := outerFrom(ctx); ok && outer.refused != nil {
			return m.errorResult(ctx, spec, outer.refused), nil
		}
		args, err := decodeArgs(req)
		if err != nil {
			return m.errorResult(ctx, spec, err), nil
		}
		target, err := spec.target(args)
		if err != nil {
			return m.errorResult(ctx, spec, err), nil
		}
		budget := api.MaxResultBudget
		if _, limited := args["limit"]; spec.list && !limited {
			budget = api.DefaultPageBudget
		}
		rec, err := m.serveInner(api.WithResultBudget(ctx, budget), spec.tool.Name, target)
		if ctx.Err() != nil { // the client cancelled the call: not a fault of ours
			return m.errorResult(ctx, spec, cancelled()), nil
		}
		if err != nil {
			return m.errorResult(ctx, spec, err), nil
		}
		if ok := rec.status < 300 && rec.body.Len() > budget*api.BytesPerToken; ok {
			return m.errorResult(ctx, spec, m.tooLarge(spec, rec.body.Len(), budget)), nil
		}
		return m.toolResult(spec, rec), nil
	}
}

// cancelled is the answer to a call its client cancelled.
func cancelled() error {
	return &api.Problem{Status: api.StatusClientClosed, Code: resources.CodeRequestCancelled,
		Detail: "the client cancelled this call (notifications/cancelled); nothing more was done for it"}
}

// serveInner serves GET target through the root router and records the
// answer. The context keeps the outer request id (the request-id middleware
// reuses it), carries the outer credential and is marked as an MCP tool
// call (its POST took the call's two units, so the GET costs nothing more).
// Chi's route context of POST /mcp is cleared: chi would otherwise reuse it
// and route the GET as a POST. Rate-limit headers (and Retry-After) the GET
// sets (a call whose POST did not pay) are copied onto the POST's answer.
func (m *MCP) serveInner(ctx context.Context, tool, target string) (*recorder, error) {
	outer, ok := outerFrom(ctx)
	if !ok {
		return nil, errors.New("tools: tool call without its POST /mcp request") // an internal fault
	}
	ctx = api.WithAuthenticated(api.WithMCPTool(ctx, tool, outer.method == api.MCPToolCall), outer.cred)
	ctx = context.WithValue(ctx, chi.RouteCtxKey, nil)
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	r.RemoteAddr, r.Host = outer.remoteAddr, outer.host
	r.Header.Set("Accept", "application/json")
	rec := newRecorder()
	m.srv.Router().ServeHTTP(rec, r)
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Policy", "Retry-After"} {
		if v := rec.header.Get(h); v != "" {
			outer.header.Set(h, v)
		}
	}
	return rec, nil
}

// toolResult converts the recorded REST answer. A 2xx JSON object becomes
// structured content and text, both the exact body (its bytes are written
// as they are: never decoded and encoded again); any other 2xx body is
// text. Anything else is a tool error: the problem document, with hints for
// the agent (see hint), as structured content and as its text.
func (m *MCP) toolResult(spec toolSpec, rec *recorder) *mcp.CallToolResult {
	body := rec.body.Bytes()
	if rec.status == 0 { // nothing written: net/http would send 200
		rec.status = http.StatusOK
	}
	if rec.status >= 200 && rec.status < 300 {
		res := mcp.NewToolResultText(string(body))
		if isJSONObject(rec.header.Get("Content-Type"), body) {
			res.RawStructuredContent = json.RawMessage(body)
		}
		return res
	}
	obj := jsonObject(body)
	if obj == nil {
		return mcp.NewToolResultError(string(body))
	}
	return m.problemResult(spec, obj)
}

// isJSONObject reports whether an answer of the API is one JSON object: its
// media type is JSON and its body starts with '{'. The body is not scanned:
// Huma writes it with one json.Encoder.Encode, which writes nothing unless
// the whole value encoded, so a JSON answer is complete and valid.
func isJSONObject(contentType string, body []byte) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	t := bytes.TrimLeft(body, " \t\r\n")
	jsonType := mt == "application/json" || strings.HasSuffix(mt, "+json")
	return err == nil && jsonType && len(t) > 0 && t[0] == '{'
}

// errorResult reports an error found before or instead of the REST request
// as a tool error carrying the problem document, encoded as REST encodes
// it, with hints. Its instance is the path of the MCP endpoint.
func (m *MCP) errorResult(ctx context.Context, spec toolSpec, err error) *mcp.CallToolResult {
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, Path, nil) // a constant, valid target
	p := m.srv.ProblemFor(r, err)
	var body bytes.Buffer
	if merr := api.JSONFormat.Marshal(&body, p); merr != nil {
		return mcp.NewToolResultError(p.Error())
	}
	return m.problemResult(spec, jsonObject(body.Bytes()))
}

// problemResult is the tool error of a problem document: the problem with
// the agent's hints as structured content, and its JSON as text.
func (m *MCP) problemResult(spec toolSpec, problem map[string]any) *mcp.CallToolResult {
	m.hint(spec, problem)
	text, err := json.Marshal(problem)
	if err != nil {
		text = []byte(fmt.Sprint(problem))
	}
	res := mcp.NewToolResultError(string(text))
	res.StructuredContent = problem
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

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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"platformapi/api"
	"platformapi/resources"
)

// handler answers a tools/call of spec (see run); every result, a tool
// error too, carries the token's rate budget after the call in its _meta
// (RateMetaKey).
func (m *MCP) handler(spec toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		outer, ok := outerFrom(ctx)
		if !ok {
			return nil, errors.New("tools: tool call without its POST /mcp request") // an internal fault
		}
		res := m.run(ctx, spec, outer, req)
		if outer.rate != nil && outer.rate.Limit > 0 { // zero: the limiter could not be asked
			res.Meta = mcp.NewMetaFromMap(map[string]any{RateMetaKey: *outer.rate})
		}
		return res, nil
	}
}

// RateMetaKey is the member of a tool result's _meta holding the token's
// rate budget after the call: {limit, remaining, reset_seconds}, as
// GET /whoami's rate_limit.
const RateMetaKey = "platformapi/rate_limit"

// run answers a tools/call of spec by running its operation in-process
// (api.Server.Invoke) with the caller's credential (authenticated once, by
// the POST's guard) and address: permissions, audit and problem documents
// are exactly those of REST. The result is bounded by the call's budget
// (api.DefaultPageBudget for a list called without limit,
// api.MaxResultBudget otherwise).
func (m *MCP) run(ctx context.Context, spec toolSpec, outer outerRequest,
	req mcp.CallToolRequest) *mcp.CallToolResult {
	if outer.refused != nil {
		return m.errorResult(ctx, spec, outer.refused)
	}
	args, err := decodeArgs(req)
	if err == nil {
		err = spec.checkTypes(args)
	}
	if err != nil {
		return m.errorResult(ctx, spec, err)
	}
	c := spec.call(args)
	c.Credential, c.Paid, c.Rate = outer.cred, outer.method == api.MCPToolCall, outer.rate
	c.RemoteAddr, c.Host = outer.remoteAddr, outer.host
	c.Budget = api.MaxResultBudget
	if _, limited := args["limit"]; spec.list && !limited {
		c.Budget = api.DefaultPageBudget
	}
	a, err := m.srv.Invoke(ctx, c)
	if ctx.Err() != nil { // the client cancelled the call: not a fault of ours
		return m.errorResult(ctx, spec, cancelled())
	}
	if err != nil {
		return m.errorResult(ctx, spec, err)
	}
	copyRateHeaders(outer.header, a.Header)
	if a.Status < 300 && a.Body.Len() > c.Budget*api.BytesPerToken {
		return m.errorResult(ctx, spec, m.tooLarge(spec, a.Body.Bytes(), c.Budget, c.Path))
	}
	return m.toolResult(ctx, spec, a)
}

// cancelled is the answer to a call its client cancelled.
func cancelled() error {
	return &api.Problem{Status: api.StatusClientClosed, Code: resources.CodeRequestCancelled,
		Detail: "the client cancelled this call (notifications/cancelled); nothing more was done for it"}
}

// budgetHeaders are the headers of a token's rate budget.
var budgetHeaders = []string{api.HeaderRateLimit, api.HeaderRateRemaining, api.HeaderRatePolicy,
	"Retry-After"}

// copyRateHeaders puts the rate-limit headers (and Retry-After) an
// operation set (a call whose POST did not pay) on the POST's answer.
func copyRateHeaders(outer, inner http.Header) {
	for _, h := range budgetHeaders {
		if v := inner.Get(h); v != "" {
			outer.Set(h, v)
		}
	}
}

// toolResult converts the operation's answer. A 2xx JSON object becomes
// structured content and text, both the exact body (its bytes are written
// as they are: never decoded and encoded again); any other 2xx body is
// text. Anything else is a tool error: the problem document, with hints for
// the agent (see hint), as structured content and as its text.
func (m *MCP) toolResult(ctx context.Context, spec toolSpec, a *api.Answer) *mcp.CallToolResult {
	body := a.Body.Bytes()
	if a.Status >= 200 && a.Status < 300 {
		res := mcp.NewToolResultText(string(body))
		if isJSONObject(a.Header.Get("Content-Type"), body) {
			res.RawStructuredContent = json.RawMessage(body)
		}
		return res
	}
	obj := jsonObject(body)
	if obj == nil {
		return mcp.NewToolResultError(string(body))
	}
	return m.problemResult(ctx, spec, obj)
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
	return m.problemResult(ctx, spec, jsonObject(body.Bytes()))
}

// problemResult is the tool error of a problem document: the problem with
// the agent's hints as structured content, and its JSON as text.
func (m *MCP) problemResult(ctx context.Context, spec toolSpec,
	problem map[string]any) *mcp.CallToolResult {
	m.hint(ctx, spec, problem)
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

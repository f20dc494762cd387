package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// explain rewrites the not-found answers in which mcp-go names nothing an
// agent can act on ("tool 'x' not found: tool not found", the same for a
// call without a name, "handler not found for resource URI …", "illegal
// base64 data at input byte 0") into words saying what to do: call
// tools/list, prompts/list or resources/list, name the tool, leave the
// cursor out. The code stays (-32602 Invalid params, as MCP answers an
// unknown tool or prompt; -32002 for a resource). Params mcp-go could not
// read (unread) are named by paramsProblem. Any other answer is returned as
// it is.
func (m *MCP) explain(ctx context.Context, msg rpcMessage, resp mcp.JSONRPCMessage,
	unread *unparsed) mcp.JSONRPCMessage {
	e, ok := resp.(mcp.JSONRPCError)
	if !ok {
		return resp
	}
	if e.Error.Code == mcp.INVALID_REQUEST {
		return paramsProblem(e, unread)
	}
	var text string
	switch method := mcp.MCPMethod(msg.Method); {
	case e.Error.Code == mcp.RESOURCE_NOT_FOUND && method == mcp.MethodResourcesRead:
		text = "no resource " + strconv.Quote(paramString(msg, "uri")) +
			"; call resources/list for the resources this server offers"
	case e.Error.Code != mcp.INVALID_PARAMS:
	case method == mcp.MethodToolsCall:
		text = m.unknownTool(ctx, msg.Params.Name)
	case method == mcp.MethodPromptsGet:
		text = unknownPrompt(paramString(msg, "name"))
	case method == mcp.MethodToolsList, method == mcp.MethodPromptsList,
		method == mcp.MethodResourcesList, method == mcp.MethodResourcesTemplatesList:
		text = "invalid cursor: this server answers " + msg.Method + " in one page and never sets " +
			"nextCursor; call " + msg.Method + " without cursor"
	}
	if text != "" {
		e.Error.Message = text
	}
	return e
}

// unknownTool is the message of a tools/call naming no tool served ("" for
// one that is served: its -32602 is its own), with the tool the name
// differs from only in case or '_' for '-' when the caller can call it.
func (m *MCP) unknownTool(ctx context.Context, name string) string {
	const list = "call tools/list for the tools this token can call"
	if _, ok := m.byName[name]; ok {
		return ""
	}
	if name == "" {
		return "params.name is required: the name of the tool to call; " + list
	}
	text := "unknown tool " + strconv.Quote(name)
	near := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
	if near != name && m.callable(ctx, near) {
		text += " (did you mean " + near + "?)"
	}
	return text + "; " + list
}

// unknownPrompt is the message of a prompts/get of a prompt not offered to
// the caller: unknown, or naming a tool its token or toolset selection
// leaves out. (A missing argument of an offered prompt was refused before.)
func unknownPrompt(name string) string {
	const list = "call prompts/list for the prompts offered to this token and toolset selection"
	if name == "" {
		return "params.name is required: the name of the prompt to get; " + list
	}
	return "no prompt " + strconv.Quote(name) + " is offered here; " + list
}

// paramString is the string member key of the message's params ("" when
// absent or not a string).
func paramString(msg rpcMessage, key string) string {
	var req struct {
		Params map[string]any `json:"params"`
	}
	_ = json.Unmarshal(msg.body, &req) // a valid message: it parsed once already
	s, _ := req.Params[key].(string)
	return s
}

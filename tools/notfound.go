package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// explain rewrites the -32602 Invalid params answers in which mcp-go names
// nothing an agent can act on ("tool 'x' not found: tool not found", "tool
// ” not found", "illegal base64 data at input byte 0") into words saying
// what to do: call tools/list or prompts/list, name the tool, leave the
// cursor out. The code stays -32602, as MCP answers an unknown tool. Any
// other answer is returned as it is.
func (m *MCP) explain(ctx context.Context, msg rpcMessage,
	resp mcp.JSONRPCMessage) mcp.JSONRPCMessage {
	e, ok := resp.(mcp.JSONRPCError)
	if !ok || e.Error.Code != mcp.INVALID_PARAMS {
		return resp
	}
	var text string
	switch mcp.MCPMethod(msg.Method) {
	case mcp.MethodToolsCall:
		text = m.unknownTool(ctx, msg.Params.Name)
	case mcp.MethodPromptsGet:
		text = unknownPrompt(msg)
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList,
		mcp.MethodResourcesTemplatesList:
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
func unknownPrompt(msg rpcMessage) string {
	var req struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(msg.body, &req) // a valid message: it parsed once already
	return "no prompt " + strconv.Quote(req.Params.Name) + " is offered to this token and toolset " +
		"selection; call prompts/list for those that are"
}

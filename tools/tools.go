// Package tools is the MCP side of platformapi: every read (GET) operation
// declared in the api package becomes an MCP tool, served by mcp-go's
// MCPServer at POST /mcp on the API's router, stateless, one handler for
// every message (streamable HTTP, answers as single JSON bodies).
//
// Nothing here is written per endpoint. The tool list is derived from the
// Huma OpenAPI document (input schema from the parameters, output schema
// from the 200 answer, toolset and permissions from the operation's
// declaration), and a tool call runs its operation in-process (api.Server.Invoke)
// with the caller's credential, so permissions, rate limit, audit and
// problem documents are exactly those of REST. tools/list shows only the
// tools the token's effective scopes can call, narrowed to the toolsets the
// client asks for.
package tools

import (
	"context"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"platformapi/api"
	"platformapi/resources"
)

// Path is where the MCP endpoint is mounted on the root router. Only POST
// is routed; GET and DELETE answer the router's 405 problem.
const Path = "/mcp"

// serverName is the MCP server's implementation name.
const serverName = "platformapi"

// instructions tell an agent how the tools behave.
const instructions = "Read-only tools over the platform management API (" + api.Prefix + "). " +
	"Each tool is one GET operation: its arguments are the operation's path and query parameters, " +
	"its result is the same JSON the REST API answers. A refused call is a tool error whose " +
	"structured content is an RFC 9457 problem document; branch on its `code`, follow `hint`, " +
	"`remedy` and `next_tool`. Lists are paged and bounded: pass `next_cursor` back as `cursor` " +
	"until it is null; a page stops early rather than pass 8,000 estimated tokens (25,000 with an " +
	"explicit limit); `fields` keeps only the members you need. A tool call costs two of the " +
	"token's 600 units a minute, any other MCP message one; when refused, wait " +
	"`retry_after_seconds`. Every tool result's `_meta` holds `" + RateMetaKey + "` {limit, " +
	"remaining, reset_seconds}: the budget after that call. get-whoami answers the server's clock " +
	"(`now`); trust it over your own sense of the date."

// Config configures the MCP endpoint.
type Config struct {
	// AllowedOrigins are the exact Origin header values (for example
	// "https://portal.example") a POST /mcp may carry. A request without
	// Origin is always accepted; with an empty list, any request carrying
	// Origin is refused with 403 origin_not_allowed.
	AllowedOrigins []string
}

// MCP is the mounted MCP endpoint: the derived tools and the mcp-go server
// answering them.
type MCP struct {
	srv    *api.Server
	cfg    Config
	specs  []toolSpec
	byName map[string]toolSpec
	mcp    *server.MCPServer
	// promptUses are, by prompt name, the tools its text tells the agent
	// to call; a prompt is offered only with all of them.
	promptUses map[string][]toolSpec
	promptDefs map[string]mcp.Prompt // by name, as registered
	answers    sync.Pool             // *answerBuffer, for writeMessage
}

// New derives the tools from srv's OpenAPI document and mounts POST /mcp on
// srv.Router(). Call it after every operation is registered. It fails when
// an operation cannot become a tool (missing or duplicate operation id,
// unresolvable parameter schema).
func New(srv *api.Server, cfg Config) (*MCP, error) {
	specs, err := deriveTools(srv.API().OpenAPI())
	if err != nil {
		return nil, err
	}
	cfg.AllowedOrigins = slices.Clone(cfg.AllowedOrigins)
	m := &MCP{srv: srv, cfg: cfg, specs: specs, byName: map[string]toolSpec{}}
	m.answers.New = newAnswerBuffer
	hooks := &server.Hooks{}
	hooks.AddOnError(noteUnparsable)
	m.mcp = server.NewMCPServer(serverName, resources.APIVersion,
		server.WithTitle("Cloud Platform Management API"),
		server.WithInstructions(instructions),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithToolFilter(m.visibleTools),
		server.WithPromptFilter(m.visiblePrompts),
		server.WithRecovery(),
		server.WithHooks(hooks),
	)
	for _, s := range specs {
		m.byName[s.tool.Name] = s
		m.mcp.AddTool(s.tool, m.toolHandler(s))
	}
	if err := m.addCatalogues(); err != nil {
		return nil, err
	}
	if err := m.addPrompts(); err != nil {
		return nil, err
	}
	// Stateless: no Mcp-Session-Id, any replica serves any request. One
	// handler answers every message (handle); mcp-go's HTTP transport is not
	// used (docs/decisions.md says why).
	srv.Router().Post(Path, m.handle)
	return m, nil
}

// visibleTools is the tools/list filter: only the tools the calling token's
// effective scopes can call, in the toolsets the client asked for. Other
// messages pass every tool through, so calling a tool that tools/list hides
// still answers its REST problem (403 forbidden with the keys required).
func (m *MCP) visibleTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	outer, ok := outerFrom(ctx)
	if !ok || outer.method != string(mcp.MethodToolsList) {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool {
		s, ok := m.byName[t.Name]
		return !ok || !outer.offers(s)
	})
}

// offers reports whether tools/list shows s to this request: its token's
// effective scopes can call it, in a toolset the client asked for.
func (o outerRequest) offers(s toolSpec) bool {
	return (o.toolsets == nil || o.toolsets[s.toolset]) && o.cred.Holds(s.permissions...)
}

// Tools returns the tools served, sorted by name.
func (m *MCP) Tools() []mcp.Tool {
	out := make([]mcp.Tool, len(m.specs))
	for i, s := range m.specs {
		out[i] = s.tool
		out[i].RawInputSchema = slices.Clone(s.tool.RawInputSchema)
		out[i].RawOutputSchema = slices.Clone(s.tool.RawOutputSchema)
	}
	return out
}

package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"platformapi/api"
	"platformapi/resources/tracing"
)

// Attributes of a tool call's span (OpenTelemetry's conventions for MCP and
// generative AI tools, and the problem's code of a tool error).
const (
	attrGenAIOp     = attribute.Key("gen_ai.operation.name")
	attrToolset     = attribute.Key("platformapi.toolset")
	attrErrorType   = attribute.Key("error.type")
	attrProblemCode = attribute.Key("platformapi.problem.code")
)

// toolHandler is the handler of spec's tool (named after its operation): with tracing on, wrapped in a
// span "tools/call <tool>" around the call (the in-process request and
// its queries are its children); off, the plain handler.
func (m *MCP) toolHandler(spec toolSpec) server.ToolHandlerFunc {
	h := m.handler(spec)
	t := m.srv.Tracing()
	if t == nil {
		return h
	}
	tracer, name := t.Tracer(), api.MCPToolCall+" "+spec.tool.Name
	start := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		tracing.AttrMCPMethod.String(api.MCPToolCall), tracing.AttrToolName.String(spec.tool.Name),
		attrGenAIOp.String("execute_tool"), attrToolset.String(spec.toolset))}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, span := tracer.Start(ctx, name, start...)
		defer span.End()
		res, err := h(ctx, req)
		switch {
		case err != nil:
			span.RecordError(err)
			span.SetStatus(codes.Error, "tool call failed")
		case res != nil && res.IsError:
			span.SetAttributes(attrErrorType.String("tool_error"))
			if p, ok := res.StructuredContent.(map[string]any); ok {
				code, _ := p["code"].(string)
				span.SetAttributes(attrProblemCode.String(code))
			}
			span.SetStatus(codes.Error, "tool error")
		}
		return res, err
	}
}

package tools

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/tracing/tracingtest"
)

// withTracing turns tracing on, recording spans in rec.
func withTracing(rec *tracingtest.Recorder) envOption {
	return func(o *apitest.Options, _ *Config) { o.Tracing = rec.Tracing }
}

// traceTree is the spans of trace id as an indented tree of names, parents
// before children, siblings in the order they started.
func traceTree(rec *tracingtest.Recorder, id trace.TraceID) string {
	spans := rec.Find(func(s sdktrace.ReadOnlySpan) bool { return s.SpanContext().TraceID() == id })
	slices.SortFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	var b strings.Builder
	var walk func(parent trace.SpanID, depth int)
	walk = func(parent trace.SpanID, depth int) {
		for _, s := range spans {
			if s.Parent().SpanID() == parent {
				fmt.Fprintf(&b, "%s%s (%s)\n", strings.Repeat("  ", depth), s.Name(), s.SpanKind())
				walk(s.SpanContext().SpanID(), depth+1)
			}
		}
	}
	walk(trace.SpanID{}, 0)
	return b.String()
}

func TestTracing_ToolsCall_SpanPerCallBetweenThePOSTAndItsOperation(t *testing.T) {
	rec := tracingtest.New(t)
	e := newEnv(t, withTracing(rec)).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead), nil, false)
	if res := call(t, c, "list-customers", map[string]any{}); res.IsError {
		t.Fatalf("tool error: %s", resultText(t, res))
	}
	span := rec.Wait(t, "the tool call's span", tracingtest.Named("tools/call list-customers"))
	if tracingtest.Attr(span, "gen_ai.tool.name").AsString() != "list-customers" ||
		tracingtest.Attr(span, "mcp.method.name").AsString() != "tools/call" ||
		tracingtest.Attr(span, "platformapi.toolset").AsString() != "tenancy" || span.Status().Code == codes.Error {
		t.Fatalf("tool span: %v %v", span.Attributes(), span.Status())
	}
	post := rec.Wait(t, "the POST /mcp span", func(s sdktrace.ReadOnlySpan) bool {
		return s.SpanContext().SpanID() == span.Parent().SpanID()
	})
	if post.Name() != "mcp" || post.SpanKind() != trace.SpanKindServer ||
		tracingtest.Attr(post, "gen_ai.tool.name").AsString() != "list-customers" {
		t.Fatalf("parent of the tool span: %q %v", post.Name(), post.Attributes())
	}
	op := rec.Wait(t, "the in-process operation's span", func(s sdktrace.ReadOnlySpan) bool {
		return tracingtest.ChildOf(span.SpanContext())(s) && s.Name() == "list-customers"
	})
	if len(rec.Find(tracingtest.ChildOf(op.SpanContext()))) == 0 {
		t.Fatal("the operation's statements have no spans under it")
	}
	// the README's "Tracing" shows this trace
	want := "mcp (server)\n  SELECT (client)\n  tools/call list-customers (internal)\n" +
		"    list-customers (server)\n      SELECT (client)\n"
	if diff := cmp.Diff(want, traceTree(rec, span.SpanContext().TraceID())); diff != "" {
		t.Fatalf("the trace of one tool call (-want +got):\n%s", diff)
	}
}

func TestTracing_ToolsCallRefused_SpanIsAnErrorWithTheProblemCode(t *testing.T) {
	rec := tracingtest.New(t)
	e := newEnv(t, withTracing(rec)).enableAPI()
	c := e.client(e.token(resources.PermAuditRead), nil, false)
	if res := call(t, c, "list-customers", map[string]any{}); !res.IsError {
		t.Fatalf("answered without tenancy:read: %s", resultText(t, res))
	}
	span := rec.Wait(t, "the tool call's span", tracingtest.Named("tools/call list-customers"))
	if span.Status().Code != codes.Error || tracingtest.Attr(span, "error.type").AsString() != "tool_error" ||
		tracingtest.Attr(span, "platformapi.problem.code").AsString() != resources.CodeForbidden {
		t.Fatalf("refused tool span: %v %v", span.Attributes(), span.Status())
	}
}

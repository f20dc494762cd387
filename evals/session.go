package evals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// Tool is a tool as tools/list announced it, schemas kept verbatim.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`

	once      sync.Once
	validator *sjs.Schema
	schemaErr error
}

// validate checks a structured result against the tool's outputSchema.
func (t *Tool) validate(doc any) error {
	if len(t.OutputSchema) == 0 {
		return fmt.Errorf("tool %s has no outputSchema", t.Name)
	}
	t.once.Do(func() {
		s, err := sjs.UnmarshalJSON(bytes.NewReader(t.OutputSchema))
		if err != nil {
			t.schemaErr = err
			return
		}
		c := sjs.NewCompiler()
		if t.schemaErr = c.AddResource("output.json", s); t.schemaErr == nil {
			t.validator, t.schemaErr = c.Compile("output.json")
		}
	})
	if t.schemaErr != nil {
		return fmt.Errorf("outputSchema of %s does not compile: %v", t.Name, t.schemaErr)
	}
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(mustJSON(doc)))
	if err != nil {
		return err
	}
	return t.validator.Validate(inst)
}

// CallResult is one tool call as the agent saw it.
type CallResult struct {
	Tool    string
	IsError bool
	Text    string // the text content, what a model reads
	Doc     any    // structured content, else the text as JSON, else nil
	Meta    any    // the result's _meta object as JSON values; nil when it has none
	Tokens  int    // estimated tokens of Text: bytes / 4, rounded up
	Latency time.Duration
}

// session is an initialized MCP client holding one bearer token.
type session struct {
	c       *client.Client
	timeout time.Duration // bound of each request (Options.StepTimeout)
	tools   []*Tool
	byName  map[string]*Tool
}

// openSession connects and initializes an MCP client at url with token;
// the handshake, and each later request, is bounded by timeout.
func openSession(ctx context.Context, url, token string, timeout time.Duration) (*session, error) {
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + token}))
	if err != nil {
		return nil, err
	}
	err = within(ctx, timeout, "MCP initialize", func(ctx context.Context) error {
		if err := c.Start(ctx); err != nil {
			return fmt.Errorf("MCP start: %w", err)
		}
		req := mcp.InitializeRequest{}
		req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		req.Params.ClientInfo = mcp.Implementation{Name: "platformapi-eval", Version: "1"}
		if _, err := c.Initialize(ctx, req); err != nil {
			return fmt.Errorf("MCP initialize: %w", err)
		}
		return nil
	})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &session{c: c, timeout: timeout}, nil
}

// listTools runs tools/list (every page) once. The schemas are those the
// mcp-go client decodes (type, properties, required, additionalProperties,
// $defs), encoded again as JSON.
func (s *session) listTools(ctx context.Context) ([]*Tool, error) {
	if s.byName != nil {
		return s.tools, nil
	}
	var res *mcp.ListToolsResult
	err := within(ctx, s.timeout, "tools/list", func(ctx context.Context) (err error) {
		if res, err = s.c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
			err = fmt.Errorf("tools/list: %w", err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	byName := map[string]*Tool{}
	for _, t := range res.Tools {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %s: %w", t.Name, err)
		}
		var tool Tool
		if err := json.Unmarshal(b, &tool); err != nil {
			return nil, fmt.Errorf("tools/list: %s: %w", t.Name, err)
		}
		s.tools, byName[t.Name] = append(s.tools, &tool), &tool
	}
	s.byName = byName
	return s.tools, nil
}

// call runs tools/call and summarises the result. A JSON-RPC or transport
// failure is an error; a refusal is a result with IsError.
func (s *session) call(ctx context.Context, name string, args map[string]any) (CallResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	start := time.Now()
	var res *mcp.CallToolResult
	err := within(ctx, s.timeout, "tools/call "+name, func(ctx context.Context) (err error) {
		if res, err = s.c.CallTool(ctx, req); err != nil {
			err = fmt.Errorf("tools/call %s: %w", name, err)
		}
		return err
	})
	out := CallResult{Tool: name, Latency: time.Since(start)}
	if err != nil {
		return out, err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	out.IsError, out.Text = res.IsError, text.String()
	out.Tokens = (len(out.Text) + 3) / 4
	out.Doc = decodeDoc(res.StructuredContent, out.Text)
	if res.Meta != nil {
		_ = json.Unmarshal(mustJSON(res.Meta), &out.Meta)
	}
	return out, nil
}

// decodeDoc is the JSON an expectation looks at: the structured content
// (as plain JSON values), else the text when it is JSON, else the text.
func decodeDoc(structured any, text string) any {
	var v any
	if structured != nil {
		if json.Unmarshal(mustJSON(structured), &v) == nil {
			return v
		}
	}
	if json.Unmarshal([]byte(text), &v) == nil {
		return v
	}
	return text
}

func (s *session) close() { _ = s.c.Close() }

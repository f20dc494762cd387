package evals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultSystemPrompt tells the model what it is doing.
const DefaultSystemPrompt = "You are an operator's assistant for a cloud platform installation. " +
	"Answer the operator's question using the tools; call as few tools as you need. " +
	"Name the concrete ids, hostnames and names you found. If a tool refuses, say why."

// OpenAI is an agent behind an OpenAI-compatible chat-completions endpoint
// (the installation's AI gateway, or any other): the MCP tools are offered
// as function tools and every tool result goes back to the model.
type OpenAI struct {
	BaseURL  string       // e.g. http://127.0.0.1:4000/v1; requests go to BaseURL/chat/completions
	Model    string       // model name the endpoint serves
	APIKey   string       // bearer key, if the endpoint needs one
	Client   *http.Client // nil: a client with a 2-minute timeout
	MaxSteps int          // model requests per turn; 0: 8
	Retries  int          // extra tries on 429 and 5xx answers; 0: 2
	System   string       // system prompt; "": DefaultSystemPrompt
}

// Name implements Agent.
func (o *OpenAI) Name() string { return "openai:" + o.Model }

// Converse implements Agent.
func (o *OpenAI) Converse() Conversation {
	return &openAIConv{o: o, messages: []chatMessage{{Role: "system", Content: ptr(cmpOr(o.System, DefaultSystemPrompt))}}}
}

type chatMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Tools       []chatTool    `json:"tools,omitempty"`
	Temperature float64       `json:"temperature"`
}

type chatResponse struct {
	Choices []struct {
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
}

// openAIConv keeps the messages of one run.
type openAIConv struct {
	o        *OpenAI
	messages []chatMessage
}

// Say implements Conversation: it asks the model until it answers without
// tool calls, running the tool calls it makes in between.
func (c *openAIConv) Say(ctx context.Context, user string, tools []*Tool, call CallFunc) (string, error) {
	c.messages = append(c.messages, chatMessage{Role: "user", Content: ptr(user)})
	fns := functionTools(tools)
	steps := c.o.MaxSteps
	if steps <= 0 {
		steps = 8
	}
	for range steps {
		msg, err := c.o.complete(ctx, chatRequest{Model: c.o.Model, Messages: c.messages, Tools: fns})
		if err != nil {
			return "", err
		}
		c.messages = append(c.messages, msg)
		if len(msg.ToolCalls) == 0 {
			if msg.Content == nil {
				return "", nil
			}
			return *msg.Content, nil
		}
		for _, tc := range msg.ToolCalls {
			c.messages = append(c.messages, chatMessage{Role: "tool", ToolCallID: tc.ID,
				Content: ptr(runToolCall(ctx, tc, call))})
		}
	}
	return "", fmt.Errorf("the model gave no answer within %d requests", steps)
}

// runToolCall runs one tool call of the model; its text goes back.
func runToolCall(ctx context.Context, tc toolCall, call CallFunc) string {
	args := map[string]any{}
	if a := strings.TrimSpace(tc.Function.Arguments); a != "" && a != "null" {
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			return `{"error":"the arguments are not a JSON object"}`
		}
	}
	return call(ctx, tc.Function.Name, args).Text
}

// functionTools offers the MCP tools as chat-completions function tools.
func functionTools(tools []*Tool) []chatTool {
	out := make([]chatTool, len(tools))
	for i, t := range tools {
		params := t.InputSchema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		fn := chatFunction{Name: t.Name, Description: t.Description, Parameters: params}
		out[i] = chatTool{Type: "function", Function: fn}
	}
	return out
}

// complete posts one chat-completions request, retrying 429 and 5xx
// answers (honouring Retry-After up to 10 seconds).
func (o *OpenAI) complete(ctx context.Context, req chatRequest) (chatMessage, error) {
	retries := o.Retries
	if retries <= 0 {
		retries = 2
	}
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		msg, wait, err := o.post(ctx, req)
		if err == nil || wait < 0 {
			return msg, err
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return chatMessage{}, ctx.Err()
		case <-time.After(wait):
		}
	}
	return chatMessage{}, lastErr
}

// post sends one request. wait >= 0 means the failure may pass on retry.
func (o *OpenAI) post(ctx context.Context, req chatRequest) (chatMessage, time.Duration, error) {
	body, _ := json.Marshal(req)
	url := strings.TrimRight(o.BaseURL, "/") + "/chat/completions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return chatMessage{}, -1, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	res, err := o.client().Do(hr)
	if err != nil {
		return chatMessage{}, 200 * time.Millisecond, fmt.Errorf("chat completions: %w", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500 {
		return chatMessage{}, retryAfter(res.Header.Get("Retry-After")),
			fmt.Errorf("chat completions answered %d: %s", res.StatusCode, cut(string(b), 200))
	}
	if res.StatusCode != http.StatusOK {
		return chatMessage{}, -1, fmt.Errorf("chat completions answered %d: %s", res.StatusCode, cut(string(b), 200))
	}
	var cr chatResponse
	if err := json.Unmarshal(b, &cr); err != nil || len(cr.Choices) == 0 {
		return chatMessage{}, -1, fmt.Errorf("chat completions answered no choice: %s", cut(string(b), 200))
	}
	msg := cr.Choices[0].Message
	msg.Role = "assistant"
	return msg, 0, nil
}

func (o *OpenAI) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

// retryAfter reads a Retry-After in seconds, capped at 10 s; default 500 ms.
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return min(time.Duration(n)*time.Second, 10*time.Second)
	}
	return 500 * time.Millisecond
}

func ptr[T any](v T) *T { return &v }

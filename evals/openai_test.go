package evals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/evals"
)

// fakeModel is a local chat-completions endpoint: it answers from a script
// (tool calls, then a final answer) and fails on demand.
type fakeModel struct {
	mu       sync.Mutex
	replies  []map[string]any // assistant messages, in order
	failures []int            // statuses to answer before the next reply
	requests []map[string]any
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var req map[string]any
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.requests = append(f.requests, req)
	if len(f.failures) > 0 {
		status := f.failures[0]
		f.failures = f.failures[1:]
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"overloaded"}}`, status)
		return
	}
	if len(f.replies) == 0 {
		http.Error(w, "script exhausted", http.StatusInternalServerError)
		return
	}
	msg := f.replies[0]
	f.replies = f.replies[1:]
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": msg, "finish_reason": "stop"}}})
}

func toolCallMsg(name, args string) map[string]any {
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"id": "call_1", "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
}

func answerMsg(text string) map[string]any {
	return map[string]any{"role": "assistant", "content": text}
}

const goodAnswer = "gpu-fra1-01 serves Qwen3 Coder; gpu-fra1-03 is an offline standby spare."

func TestOpenAIAgent_AgainstFakeChatCompletions(t *testing.T) {
	srv := startServer(t)
	files := load(t, "suites/fleet-gpu-status.yaml")
	cases := []struct {
		name     string
		replies  []map[string]any
		failures []int
		pass     bool
		reason   string // a substring of the failure reason
	}{
		{"tool call then answer", []map[string]any{toolCallMsg("list-ai-nodes", `{}`), answerMsg(goodAnswer)}, nil, true, ""},
		{"503 twice then fine", []map[string]any{toolCallMsg("list-ai-nodes", `{"site":"fra1"}`), answerMsg(goodAnswer)},
			[]int{503, 503}, true, ""},
		{"always 500", nil, []int{500, 500, 500}, false, "answered 500"},
		{"400 is not retried", nil, []int{400}, false, "answered 400"},
		{"answer misses a node", []map[string]any{toolCallMsg("list-ai-nodes", `{}`), answerMsg("All fine on gpu-fra1-01.")},
			nil, false, `does not mention "gpu-fra1-03"`},
		{"wrong tool", []map[string]any{toolCallMsg("list-customers", `{}`), answerMsg(goodAnswer)},
			nil, false, "trajectory (superset) wants [list-ai-nodes]"},
		{"unknown tool and bad arguments", []map[string]any{toolCallMsg("no-such-tool", `{}`),
			toolCallMsg("list-ai-nodes", `not json`), answerMsg(goodAnswer)}, nil, false, "wants [list-ai-nodes]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := &fakeModel{replies: c.replies, failures: c.failures}
			ts := httptest.NewServer(fake)
			defer ts.Close()
			agent := &evals.OpenAI{BaseURL: ts.URL + "/v1", Model: "fake-1", Client: ts.Client()}
			rep := evals.Run(context.Background(), target(srv), files, evals.Options{Agent: agent, NoTiming: true})
			run := rep.Suites[0].Runs[0]
			if run.Pass != c.pass || (c.reason != "" && !strings.Contains(fmt.Sprint(run.Reasons), c.reason)) {
				t.Fatalf("pass %v reasons %v; want pass %v with %q", run.Pass, run.Reasons, c.pass, c.reason)
			}
			if rep.Agent != "openai:fake-1" {
				t.Fatalf("agent %q", rep.Agent)
			}
		})
	}
}

// TestOpenAIAgent_ToolsFromToolsListAndResultsGoBack: the model is offered
// every MCP tool as a function with its input schema, and the tool result
// is the next request's tool message.
func TestOpenAIAgent_ToolsFromToolsListAndResultsGoBack(t *testing.T) {
	srv := startServer(t)
	fake := &fakeModel{replies: []map[string]any{toolCallMsg("get-ai-node", `{"hostname":"gpu-fra1-01"}`), answerMsg("ok")}}
	ts := httptest.NewServer(fake)
	defer ts.Close()
	suite := `name: one
description: d
turns:
  - user: What runs on gpu-fra1-01?
    trajectory: {mode: strict, tools: [get-ai-node]}
`
	f, err := evals.Parse("one.yaml", []byte(suite))
	if err != nil {
		t.Fatal(err)
	}
	agent := &evals.OpenAI{BaseURL: ts.URL + "/v1", Model: "fake-1", Client: ts.Client(), System: "be brief"}
	rep := evals.Run(context.Background(), target(srv), []*evals.SuiteFile{f}, evals.Options{Agent: agent})
	if !rep.OK() {
		t.Fatalf("%+v", rep.Suites[0].Runs[0])
	}
	if len(fake.requests) != 2 {
		t.Fatalf("%d model requests", len(fake.requests))
	}
	first := fake.requests[0]
	var tool map[string]any
	for _, x := range first["tools"].([]any) {
		if fn := x.(map[string]any)["function"].(map[string]any); fn["name"] == "get-ai-node" {
			tool = fn
		}
	}
	if tool == nil || tool["parameters"].(map[string]any)["properties"].(map[string]any)["hostname"] == nil {
		t.Fatalf("get-ai-node not offered with its input schema: %v", tool)
	}
	msgs := fake.requests[1]["messages"].([]any)
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m.(map[string]any)["role"].(string)
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "tool"}, roles); diff != "" {
		t.Fatalf("second request's roles (-want +got)\n%s", diff)
	}
	if !strings.Contains(msgs[3].(map[string]any)["content"].(string), `"gpu_count":7`) {
		t.Fatalf("tool result not handed back: %v", msgs[3])
	}
	if got := rep.Suites[0].Runs[0].Answers; !cmp.Equal(got, []string{"ok"}) {
		t.Fatalf("answers %v", got)
	}
}

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBareMCP_AnswersTheReadAsTextAndStructuredContent holds the MCP
// reference to the answer the server's tool gives: the row read, as the
// text content and as structured content, in one JSON-RPC answer.
func TestBareMCP_AnswersTheReadAsTextAndStructuredContent(t *testing.T) {
	row := `{"id":"17","repo":"org/model"}`
	var asked int64
	h := bareMCP(func(_ context.Context, id int64) ([]byte, error) { asked = id; return []byte(row), nil })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-ai-model","arguments":{"model_id":"17"}}}`)))
	var got struct {
		ID     int `json:"id"`
		Result struct {
			Content           []struct{ Type, Text string } `json:"content"`
			StructuredContent json.RawMessage               `json:"structuredContent"`
			IsError           bool                          `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	r := got.Result
	if asked != 17 || got.ID != 3 || r.IsError || len(r.Content) != 1 || r.Content[0].Text != row ||
		string(r.StructuredContent) != row {
		t.Fatalf("asked for %d, answered %s", asked, rec.Body)
	}
}

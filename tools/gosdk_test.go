package tools

import (
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the token to every request of the official Go SDK's client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestGoSDK_ListsAndCallsEveryToolWithABearerToken: the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) connects with a bearer token,
// lists the tools with their output schemas and calls every tool on a
// populated world; each result, and a refused call's problem, validates
// against the tool's outputSchema.
func TestGoSDK_ListsAndCallsEveryToolWithABearerToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	schemas := compileOutputSchemas(t, e.mcp)
	client := sdk.NewClient(&sdk.Implementation{Name: "platformapi-go-sdk-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.ts.URL + Path,
		HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(lt.Tools) != len(toolArgs) {
		t.Fatalf("tools/list: %v, %d tools", err, len(lt.Tools))
	}
	for _, tl := range lt.Tools {
		if tl.OutputSchema == nil {
			t.Errorf("%s: no output schema", tl.Name)
		}
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tl.Name, Arguments: toolArgs[tl.Name]})
		if err != nil || res.IsError || res.StructuredContent == nil {
			t.Errorf("%s: %v %+v", tl.Name, err, res)
			continue
		}
		validateResult(t, schemas[tl.Name], tl.Name, res.StructuredContent)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get-ai-model", Arguments: map[string]any{"model_id": "999"}})
	if err != nil || !res.IsError {
		t.Fatalf("unknown model: %v %+v", err, res)
	}
	validateResult(t, schemas["get-ai-model"], "get-ai-model error", res.StructuredContent)
}

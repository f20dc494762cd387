package tools

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileOutputSchemas compiles every tool's output schema.
func compileOutputSchemas(t *testing.T, m *MCP) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, tl := range m.Tools() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.RawOutputSchema))
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(tl.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(tl.Name + ".json")
		if err != nil {
			t.Fatalf("%s: output schema does not compile: %v", tl.Name, err)
		}
		out[tl.Name] = s
	}
	return out
}

// validateResult checks a result's structured content against the schema.
func validateResult(t *testing.T, s *jsonschema.Schema, name string, structured any) {
	t.Helper()
	raw, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s: structured content does not validate against its output schema: %v\n%s", name, err, raw)
	}
}

// TestMCP_EveryToolResultValidatesAgainstItsOutputSchema calls every tool on
// a populated world (and every list tool again with fields) and validates
// the structured content against the tool's output schema.
func TestMCP_EveryToolResultValidatesAgainstItsOutputSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := populate(t, e)
	schemas := compileOutputSchemas(t, e.mcp)
	c := e.client(tok, nil, false)
	var called []string
	for _, tl := range e.mcp.Tools() {
		args, ok := toolArgs[tl.Name]
		if !ok {
			t.Errorf("%s: no arguments in toolArgs: add the tool there", tl.Name)
			continue
		}
		called = append(called, tl.Name)
		res := call(t, c, tl.Name, args)
		if res.IsError {
			t.Errorf("%s: %s", tl.Name, resultText(t, res))
			continue
		}
		validateResult(t, schemas[tl.Name], tl.Name, res.StructuredContent)
		if items, _ := res.StructuredContent.(map[string]any)["items"].([]any); e.mcp.byName[tl.Name].list && len(items) == 0 {
			t.Errorf("%s: the populated world lists nothing", tl.Name)
		}
		if e.mcp.byName[tl.Name].list {
			field := map[string]string{"list-ai-nodes": "site", "list-audit-events": "action",
				"list-permissions": "description", "list-ai-gateway-tiers": "models"}[tl.Name]
			if field == "" {
				field = "created_at"
			}
			narrow := map[string]any{"fields": field}
			for k, v := range args {
				narrow[k] = v
			}
			res := call(t, c, tl.Name, narrow)
			validateResult(t, schemas[tl.Name], tl.Name+" with fields", res.StructuredContent)
		}
	}
	sort.Strings(called)
	if len(called) != len(toolArgs) || !slices.IsSorted(called) {
		t.Errorf("called %d tools, toolArgs has %d", len(called), len(toolArgs))
	}
}

func TestIsJSONObject_JSONMediaTypeAndAnObject(t *testing.T) {
	for _, tc := range []struct {
		contentType, body string
		want              bool
	}{
		{"application/json", `{"id":"1"}`, true},
		{"application/json; charset=utf-8", " \n{}", true},
		{"application/problem+json", `{"status":404}`, true},
		{"application/json", `[{"id":"1"}]`, false},
		{"application/json", `"text"`, false},
		{"application/json", ``, false},
		{"text/plain", `{"id":"1"}`, false},
		{"", `{"id":"1"}`, false},
	} {
		if got := isJSONObject(tc.contentType, []byte(tc.body)); got != tc.want {
			t.Errorf("isJSONObject(%q, %q) = %v, want %v", tc.contentType, tc.body, got, tc.want)
		}
	}
}

package evals

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fakeMCP serves three tools: two with an outputSchema (one answering a
// result that breaks it), one without.
func fakeMCP(t *testing.T) string {
	t.Helper()
	s := server.NewMCPServer("fake", "1", server.WithToolCapabilities(false))
	schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)
	answer := func(v map[string]any) server.ToolHandlerFunc {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(v)
			return mcp.NewToolResultStructured(v, string(b)), nil
		}
	}
	s.AddTool(mcp.NewTool("get-thing", mcp.WithRawOutputSchema(schema)), answer(map[string]any{"id": "7", "n": 3}))
	s.AddTool(mcp.NewTool("bad-thing", mcp.WithRawOutputSchema(schema)), answer(map[string]any{"n": 3}))
	s.AddTool(mcp.NewTool("plain-thing"), answer(map[string]any{"id": "7"}))
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestRun_ValidChecksOutputSchemaWhenTheToolHasOne(t *testing.T) {
	url := fakeMCP(t)
	cases := []struct {
		tool string
		want []string
	}{
		{"get-thing", nil},
		{"bad-thing", []string{"valid: jsonschema validation failed"}},
		{"plain-thing", []string{"valid: tool plain-thing has no outputSchema"}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			src := "name: v\ndescription: d\nturns:\n  - user: u\n    calls:\n      - tool: " + c.tool +
				"\n        expect: {valid: true, max_tokens: 50}\n"
			f, err := Parse("v.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			rep := Run(context.Background(), Target{URL: url, Token: "t"}, []*SuiteFile{f}, Options{NoTiming: true})
			reasons := rep.Suites[0].Runs[0].Reasons
			if len(reasons) != len(c.want) {
				t.Fatalf("reasons %v, want %v", reasons, c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(reasons[i], w) {
					t.Fatalf("reason %q lacks %q", reasons[i], w)
				}
			}
		})
	}
}

func TestRun_FixtureTokenWithoutPortal_FailsWithAReason(t *testing.T) {
	src := "name: v\ndescription: d\nfixture: {token: {scopes: [ai-read-global]}}\nturns:\n  - user: u\n    calls:\n      - tool: get-thing\n"
	f, err := Parse("v.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), Target{URL: fakeMCP(t), Token: "t"}, []*SuiteFile{f}, Options{})
	if rep.OK() || !strings.Contains(rep.Suites[0].Runs[0].Reasons[0], "needs portal access") {
		t.Fatalf("%+v", rep.Suites[0].Runs[0])
	}
}

func TestCheckPath_EachCheck(t *testing.T) {
	doc := map[string]any{"items": []any{map[string]any{"id": "1", "n": 2.0, "tags": []any{"a"}},
		map[string]any{"id": "2", "n": 5.0, "tags": []any{}}}, "next": nil, "name": "gpu-fra1-01"}
	yes, no, two, zero := true, false, 2, 0
	cases := []struct {
		name  string
		check PathCheck
		fails int
	}{
		{"eq singular", PathCheck{Path: "$.items[0].id", Eq: json.RawMessage(`"1"`)}, 0},
		{"eq null", PathCheck{Path: "$.next", Eq: json.RawMessage(`null`)}, 0},
		{"eq wrong", PathCheck{Path: "$.items[1].n", Eq: json.RawMessage(`2`)}, 1},
		{"eq array of matches", PathCheck{Path: "$.items[*].id", Eq: json.RawMessage(`["1","2"]`)}, 0},
		{"filter", PathCheck{Path: "$.items[?(@.n > 3)].id", Eq: json.RawMessage(`["2"]`)}, 0},
		{"contains in array", PathCheck{Path: "$.items[*].id", Contains: json.RawMessage(`"2"`)}, 0},
		{"contains in string", PathCheck{Path: "$.name", Contains: json.RawMessage(`"fra1"`)}, 0},
		{"contains missing", PathCheck{Path: "$.items[*].id", Contains: json.RawMessage(`"3"`)}, 1},
		{"len", PathCheck{Path: "$.items", Len: &two}, 0},
		{"len of no matches", PathCheck{Path: "$.items[?(@.n > 9)]", Len: &zero}, 0},
		{"len of a number", PathCheck{Path: "$.items[0].n", Len: &two}, 1},
		{"exists", PathCheck{Path: "$.items[0].tags", Exists: &yes}, 0},
		{"exists null member", PathCheck{Path: "$.next", Exists: &yes}, 0},
		{"not exists", PathCheck{Path: "$.items[*].secret", Exists: &no}, 0},
		{"exists wrong", PathCheck{Path: "$.nope", Exists: &yes}, 1},
		{"matches every element", PathCheck{Path: "$.items[*].id", Matches: `^\d+$`}, 0},
		{"matches number as text", PathCheck{Path: "$.items[*].n", Matches: `^[25]$`}, 0},
		{"matches fails", PathCheck{Path: "$.name", Matches: `^cpu`}, 1},
		{"singular path matching nothing", PathCheck{Path: "$.nope", Eq: json.RawMessage(`1`)}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkPath(c.check, doc); len(got) != c.fails {
				t.Fatalf("failures %v, want %d", got, c.fails)
			}
		})
	}
}

func TestJudgeTrajectory_Modes(t *testing.T) {
	got := []string{"a", "b", "a"}
	cases := []struct {
		mode  string
		tools []string
		ok    bool
	}{
		{ModeStrict, []string{"a", "b", "a"}, true},
		{ModeStrict, []string{"a", "a", "b"}, false},
		{ModeUnordered, []string{"a", "a", "b"}, true},
		{ModeUnordered, []string{"a", "b"}, false},
		{ModeSubset, []string{"a", "b", "c"}, true},
		{ModeSubset, []string{"a"}, false},
		{ModeSuperset, []string{"b"}, true},
		{ModeSuperset, []string{"b", "c"}, false},
		{"", []string{"a"}, true}, // superset by default
	}
	for _, c := range cases {
		if msg := judgeTrajectory(Trajectory{Mode: c.mode, Tools: c.tools}, got); (msg == "") != c.ok {
			t.Errorf("%s %v: %q", c.mode, c.tools, msg)
		}
	}
}

func TestVars_ExactTemplateKeepsTheTypeOthersInterpolate(t *testing.T) {
	v := vars{"id": 7.0, "host": "gpu-1"}
	got, err := v.value(map[string]any{"n": "{{id}}", "path": "/nodes/{{host}}/{{ id }}", "list": []any{"{{host}}"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": 7.0, "path": "/nodes/gpu-1/7", "list": []any{"gpu-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	if _, err := v.text("{{missing}}"); err == nil {
		t.Fatal("an unknown variable rendered")
	}
}

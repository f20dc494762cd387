package evals

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fakeFleet serves list-nodes (n nodes as objects and as names; the
// second is offline) and get-node
// (echoes its hostname; online unless it is n2), each result carrying a
// rate budget in _meta that shrinks by 2 a call; get-meta carries none.
func fakeFleet(t *testing.T, n int) string {
	t.Helper()
	s := server.NewMCPServer("fleet", "1", server.WithToolCapabilities(false))
	remaining := 600
	answer := func(v map[string]any) *mcp.CallToolResult {
		b, _ := json.Marshal(v)
		res := mcp.NewToolResultStructured(v, string(b))
		remaining -= 2
		res.Meta = mcp.NewMetaFromMap(map[string]any{"platformapi/rate_limit": map[string]any{
			"limit": 600, "remaining": remaining}})
		return res
	}
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"hostname": fmt.Sprintf("n%d", i+1), "gpus": i + 1}
	}
	names := make([]any, n)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i+1)
	}
	s.AddTool(mcp.NewTool("list-nodes"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return answer(map[string]any{"items": items, "names": names}), nil
	})
	s.AddTool(mcp.NewTool("get-node"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		host := req.GetString("hostname", "")
		return answer(map[string]any{"hostname": host, "online": host != "n2"}), nil
	})
	s.AddTool(mcp.NewTool("get-meta"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"v": 1}, `{"v":1}`), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	t.Cleanup(ts.Close)
	return ts.URL
}

// playOne parses src and plays it once against url.
func playOne(t *testing.T, url, src string) RunResult {
	t.Helper()
	f, err := Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), Target{URL: url, Token: "t"}, []*SuiteFile{f}, Options{NoTiming: true})
	return rep.Suites[0].Runs[0]
}

const forEachSuite = `name: each
description: d
turns:
  - user: Is every node online?
    calls:
      - tool: list-nodes
        capture: {nodes: $.items}
      - tool: get-node
        for_each: {in: "{{nodes}}", as: node}
        args: {hostname: "{{node.hostname}}"}
        expect:
          json:
            - {path: $.online, eq: true}
    trajectory: {mode: superset, tools: [get-node]}
`

func TestRun_ForEach_CallsOncePerElementAndNamesTheFailingElement(t *testing.T) {
	run := playOne(t, fakeFleet(t, 3), forEachSuite)
	want := []string{`turns[0].calls[1] get-node, node[1] = {"gpus":2,"hostname":"n2"}: $.online: is false, want true`}
	if diff := cmp.Diff(want, run.Reasons); diff != "" {
		t.Fatalf("reasons (-want +got)\n%s", diff)
	}
	var tools []string
	for _, c := range run.Tools {
		tools = append(tools, c.Tool)
	}
	if diff := cmp.Diff([]string{"list-nodes", "get-node", "get-node", "get-node"}, tools); diff != "" {
		t.Fatalf("calls (-want +got)\n%s", diff)
	}
}

func TestRun_ForEach_AListOfScalarsBindsTheElementItself(t *testing.T) {
	src := strings.NewReplacer("capture: {nodes: $.items}", "capture: {nodes: $.names}",
		"{{node.hostname}}", "{{node}}").Replace(forEachSuite)
	run := playOne(t, fakeFleet(t, 3), src)
	want := []string{`turns[0].calls[1] get-node, node[1] = "n2": $.online: is false, want true`}
	if diff := cmp.Diff(want, run.Reasons); diff != "" || run.Calls != 4 {
		t.Fatalf("%d calls; reasons (-want +got)\n%s", run.Calls, diff)
	}
}

func TestRun_ForEach_OverAValueThatIsNotAListMakesNoCall(t *testing.T) {
	src := strings.NewReplacer("capture: {nodes: $.items}", `capture: {first: "$.items[0]"}`,
		`in: "{{nodes}}"`, `in: "{{first.hostname}}"`).Replace(forEachSuite)
	run := playOne(t, fakeFleet(t, 1), src)
	want := []string{`turns[0].calls[1] get-node: for_each: {{first.hostname}} is "n1", not a list`}
	if diff := cmp.Diff(want, run.Reasons); diff != "" || run.Calls != 1 {
		t.Fatalf("%d calls; reasons (-want +got)\n%s", run.Calls, diff)
	}
}

func TestRun_ForEach_MoreThanTheBoundMakesNoCall(t *testing.T) {
	run := playOne(t, fakeFleet(t, MaxForEach+1), forEachSuite)
	want := []string{"turns[0].calls[1] get-node: for_each: {{nodes}} holds 101 elements, more than 100"}
	if diff := cmp.Diff(want, run.Reasons); diff != "" || run.Calls != 1 {
		t.Fatalf("%d calls; reasons (-want +got)\n%s", run.Calls, diff)
	}
}

func TestRun_ForEach_MissingMemberEndsTheRunNamingIt(t *testing.T) {
	src := strings.Replace(forEachSuite, "{{node.hostname}}", "{{node.host}}", 1)
	run := playOne(t, fakeFleet(t, 2), src)
	want := []string{`turns[0]: turns[0].calls[1] get-node, node[0] = {"gpus":1,"hostname":"n1"}: {{node.host}}: node has no member host`}
	if diff := cmp.Diff(want, run.Reasons); diff != "" || run.Calls != 1 {
		t.Fatalf("%d calls; reasons (-want +got)\n%s", run.Calls, diff)
	}
}

func TestRun_Meta_ChecksTheResultsMeta(t *testing.T) {
	src := `name: m
description: d
turns:
  - user: u
    calls:
      - tool: list-nodes
        expect:
          meta:
            - {path: "$['platformapi/rate_limit'].limit", eq: 600}
            - {path: "$['platformapi/rate_limit'].remaining", eq: 598}
            - {path: "$['platformapi/rate_limit'].remaining", count: {eq: 1}}
      - tool: get-node
        args: {hostname: n1}
        expect:
          meta:
            - {path: "$['platformapi/rate_limit'].remaining", eq: 598}
            - {path: "$['platformapi/rate_limit'].remaining", max: {at_least: 597}}
      - tool: get-meta
        expect:
          meta:
            - {path: "$['platformapi/rate_limit']", exists: false}
`
	run := playOne(t, fakeFleet(t, 1), src)
	want := []string{
		"turns[0].calls[1] get-node: _meta $['platformapi/rate_limit'].remaining: is 596, want 598",
		"turns[0].calls[1] get-node: _meta $['platformapi/rate_limit'].remaining: max is 596, want at least 597",
	}
	if diff := cmp.Diff(want, run.Reasons); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
}

func TestParse_ForEachMetaAndBoundFaults(t *testing.T) {
	const turn = "    trajectory: {mode: superset, tools: [get-node]}\n"
	cases := []struct {
		name, old, new string
		want           FileError
	}{
		{"in is not a template", `in: "{{nodes}}"`, `in: nodes`, FileError{Line: 9,
			Member: "turns[0].calls[1].for_each.in", Msg: "in is exactly one {{var}} (or {{var.member}}) holding a list captured before"}},
		{"in not captured", `in: "{{nodes}}"`, `in: "{{hosts}}"`, FileError{Line: 9,
			Member: "turns[0].calls[1].for_each.in", Msg: "{{hosts}} is not captured by an earlier step or call"}},
		{"as shadows a capture", `as: node}
        args: {hostname: "{{node.hostname}}"}`, `as: nodes}
        args: {hostname: "{{nodes.hostname}}"}`, FileError{Line: 9,
			Member: "turns[0].calls[1].for_each.as", Msg: "nodes is captured before; the element needs a name of its own"}},
		{"capture with for_each", "        args: {hostname", "        capture: {x: $.id}\n        args: {hostname", FileError{
			Line: 10, Member: "turns[0].calls[1].capture", Msg: "a call with for_each captures nothing: which of its calls' results would it be?"}},
		{"element outside its call", turn, "      - tool: get-node\n        args: {hostname: \"{{node}}\"}\n" + turn,
			FileError{Line: 15, Member: "turns[0].calls[2].args.hostname", Msg: "{{node}} is not captured by an earlier step or call"}},
		{"strict trajectory", "mode: superset", "mode: strict", FileError{Line: 14, Member: "turns[0].trajectory.mode",
			Msg: "a turn with for_each calls its tool a number of times known only when it runs: use superset or subset"}},
		{"empty bound", "{path: $.online, eq: true}", "{path: $.online, sum: {}}", FileError{Line: 13,
			Member: "turns[0].calls[1].expect.json[0].sum", Msg: "give eq, or at_least and/or at_most"}},
		{"eq with a bound", "{path: $.online, eq: true}", "{path: $.online, count: {eq: 1, at_most: 2}}", FileError{Line: 13,
			Member: "turns[0].calls[1].expect.json[0].count", Msg: "give eq, or at_least and/or at_most, not both"}},
		{"bounds crossed", "{path: $.online, eq: true}", "{path: $.online, max: {at_least: 3, at_most: 2.5}}", FileError{Line: 13,
			Member: "turns[0].calls[1].expect.json[0].max", Msg: "at_least 3 is more than at_most 2.5"}},
		{"bad meta path", "json:\n            - {path: $.online, eq: true}", "meta:\n            - {path: \"$[\", eq: 1}",
			FileError{Line: 13, Member: "turns[0].calls[1].expect.meta[0].path"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(forEachSuite, c.old, c.new, 1)
			if src == forEachSuite {
				t.Fatal("edit did not apply")
			}
			_, err := Parse("f.yaml", []byte(src))
			got := fileErrors(err)
			c.want.File = "f.yaml"
			if c.want.Msg == "" && len(got) == 1 {
				got[0].Msg = ""
			}
			if diff := cmp.Diff([]FileError{c.want}, got); diff != "" {
				t.Fatalf("%v\n(-want +got)\n%s", err, diff)
			}
		})
	}
}

func TestParse_AggregatesAndMetaAreChecks(t *testing.T) {
	src := strings.Replace(forEachSuite, "{path: $.online, eq: true}",
		"{path: $.online, count: {eq: 1}}\n            - {path: $.x, sum: {at_least: 0}}", 1)
	src = strings.Replace(src, "        capture: {nodes: $.items}\n",
		"        capture: {nodes: $.items}\n        expect:\n          meta:\n            - {path: $.a, max: {at_most: 1}}\n", 1)
	if _, err := Parse("f.yaml", []byte(src)); err != nil {
		t.Fatal(err)
	}
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"
	"github.com/google/go-cmp/cmp"

	"platformapi/api"
)

type sampleIn struct {
	ID    string   `path:"id" doc:"Thing id"`
	Tags  []string `query:"tag,explode" doc:"Any of these tags"`
	Kinds []string `query:"kinds"`
	Limit int      `query:"limit" minimum:"1" default:"10"`
	Must  string   `query:"must" required:"true"`
	Trace string   `header:"X-Trace"`
}

type sampleOut struct{ Body struct{ OK bool } }

// sampleAPI declares, on one path, a GET and every write method, plus a
// hidden GET, and returns its OpenAPI document. toolset is the GET's
// x-toolset ("" leaves it out).
func sampleAPI(t *testing.T, toolset string) *huma.OpenAPI {
	_, a := humatest.New(t)
	h := func(context.Context, *sampleIn) (*sampleOut, error) { return &sampleOut{}, nil }
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		op := api.Op{ID: "op-" + m, Method: m, Path: "/things/{id}", Summary: "Sum " + m, Description: "Desc " + m}
		if m == "GET" {
			op.Toolset = toolset
		}
		api.Register(a, op, h)
	}
	huma.Register(a, huma.Operation{OperationID: "hidden-get", Method: "GET", Path: "/hidden/{id}", Hidden: true}, h)
	return a.OpenAPI()
}

func TestDerive_GETWithoutToolset_Fails(t *testing.T) {
	t.Parallel()
	for _, ts := range []string{"", "bogus"} {
		_, err := deriveTools(sampleAPI(t, ts))
		if err == nil || !strings.Contains(err.Error(), "op-GET") || !strings.Contains(err.Error(), "toolset") {
			t.Errorf("toolset %q: %v", ts, err)
		}
	}
}

func TestDerive_OutputSchemaFromTheAnswer(t *testing.T) {
	t.Parallel()
	specs, err := deriveTools(sampleAPI(t, api.ToolsetAudit))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(specs[0].tool.RawOutputSchema, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "object",
		"anyOf": []any{map[string]any{"$ref": "#/$defs/SampleOutBody"}, map[string]any{"required": []any{"type", "code"}}},
		"$defs": map[string]any{"SampleOutBody": map[string]any{"type": "object", "required": []any{"OK"},
			"properties": map[string]any{"OK": map[string]any{"type": "boolean"}}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("output schema (-want +got):\n%s", diff)
	}
}

func TestDerive_OnlyVisibleGETs(t *testing.T) {
	t.Parallel()
	specs, err := deriveTools(sampleAPI(t, api.ToolsetAudit))
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].tool.Name != "op-GET" {
		t.Fatalf("tools %v", specs)
	}
	s := specs[0]
	if s.tool.Description != "Desc GET" || s.tool.Title != "Sum GET" {
		t.Fatalf("texts %q %q", s.tool.Description, s.tool.Title)
	}
	var schema struct {
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(s.tool.RawInputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(schema.Required, []string{"id", "must"}) || schema.AdditionalProperties ||
		len(schema.Properties) != 5 || s.toolset != api.ToolsetAudit || schema.Properties["id"]["description"] != "Thing id" ||
		schema.Properties["limit"]["default"] != 10.0 {
		t.Fatalf("schema %s", s.tool.RawInputSchema)
	}
	c := s.call(map[string]any{"id": "a/b", "tag": []any{"x", "y"}, "kinds": []any{"p", "q"},
		"limit": json.Number("2.0"), "must": true, "extra": nil})
	want := api.Call{Operation: "op-GET", Path: map[string]string{"id": "a/b"}, Query: url.Values{
		"extra": {""}, "kinds": {"p,q"}, "limit": {"2"}, "must": {"true"}, "tag": {"x", "y"}}}
	if d := cmp.Diff(want, c); d != "" {
		t.Fatalf("call (-want +got):\n%s", d)
	}
}

func TestArgString(t *testing.T) {
	t.Parallel()
	for in, want := range map[any]string{
		"x": "x", json.Number("12345678901234567890"): "12345678901234567890", json.Number("5e1"): "50",
		json.Number("2.5"): "2.5", 3.0: "3", true: "true", false: "false",
	} {
		if got := argString(in); got != want {
			t.Errorf("%v: %q, want %q", in, got, want)
		}
	}
	if got := argString(map[string]any{"a": 1}); got != `{"a":1}` {
		t.Errorf("object: %q", got)
	}
}

// TestMCP_ToolSnapshots compares each tool (name, descriptions, input and
// output schemas, annotations) with testdata/tools/<name>.json.
// UPDATE_SNAPSHOTS=1 rewrites the files (and removes those of tools that are
// gone); a missing file fails.
func TestMCP_ToolSnapshots(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join("testdata", "tools")
	update := os.Getenv("UPDATE_SNAPSHOTS") == "1"
	if update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := map[string]bool{}
	for _, tl := range e.mcp.Tools() {
		names[tl.Name+".json"] = true
		got, err := json.MarshalIndent(tl, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, tl.Name+".json")
		if update {
			if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (create it with UPDATE_SNAPSHOTS=1 go test ./tools/ -run Snapshots, then review it)", err)
			continue
		}
		if !bytes.Equal(append(got, '\n'), want) {
			t.Errorf("tool %s differs from %s; if the change is intended, rerun with UPDATE_SNAPSHOTS=1 "+
				"and review the diff.\ngot:\n%s", tl.Name, path, got)
		}
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if !names[f.Name()] {
			t.Errorf("%s snapshots no tool; rerun with UPDATE_SNAPSHOTS=1", f.Name())
		}
	}
}

// A tool is derived from its operation's declaration (api.Declared): a GET
// registered without one is refused, not guessed from the document.
func TestDerive_UndeclaredGET_Fails(t *testing.T) {
	t.Parallel()
	_, a := humatest.New(t)
	h := func(context.Context, *sampleIn) (*sampleOut, error) { return &sampleOut{}, nil }
	huma.Register(a, huma.Operation{OperationID: "bare-get", Method: "GET", Path: "/bare/{id}"}, h)
	if _, err := deriveTools(a.OpenAPI()); err == nil || !strings.Contains(err.Error(), "not declared") {
		t.Fatalf("an undeclared GET: %v", err)
	}
}

type exampleIn struct {
	ID    string   `path:"id" example:"42" doc:"Thing id"`
	Kinds []string `query:"kinds" example:"a,b" doc:"Kinds"`
	Name  string   `query:"name" example:"ACME" doc:"Exact name"`
}

// The docs page's examples (schema examples from struct tags, parameter
// examples) cost tools/list tokens and tell an agent nothing the description
// does not: no tool argument carries one, at any depth.
func TestDerive_ArgumentSchemas_CarryNoExamples(t *testing.T) {
	t.Parallel()
	_, a := humatest.New(t)
	h := func(context.Context, *exampleIn) (*sampleOut, error) { return &sampleOut{}, nil }
	api.Register(a, api.Op{ID: "get-thing", Method: "GET", Path: "/things/{id}", Summary: "Get a thing",
		Toolset: api.Toolsets()[0]}, h)
	doc := a.OpenAPI()
	for _, p := range doc.Paths["/things/{id}"].Get.Parameters {
		p.Example = "in the document"
	}
	if !strings.Contains(string(mustJSON(t, doc)), `"examples":["42"]`) {
		t.Fatal("the sample's document carries no schema example: the test proves nothing")
	}
	specs, err := deriveTools(doc)
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(mustJSON(t, specs[0].tool)); strings.Contains(raw, `"example`) {
		t.Fatalf("the tool carries an example: %s", raw)
	}
}

// The same for every tool the server offers, whose parameters carry the
// served document's examples.
func TestMCP_ToolSchemas_CarryNoExamples(t *testing.T) {
	e := newEnv(t)
	for _, tl := range e.mcp.Tools() {
		if raw := string(mustJSON(t, tl)); strings.Contains(raw, `"example`) {
			t.Errorf("tool %s carries an example: %s", tl.Name, raw)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestDerive_HeaderParameters_NeverToolArguments: a GET's header parameters
// (get-brand's If-None-Match) belong to HTTP, not to an agent: no tool takes
// one as an argument, so a tool call never sends one and get-brand always
// answers an agent the brand, never a 304 without a body.
func TestDerive_HeaderParameters_NeverToolArguments(t *testing.T) {
	e := newEnv(t)
	doc := e.srv.API().OpenAPI()
	specs, err := deriveTools(doc)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]toolSpec{}
	for _, s := range specs {
		tools[s.tool.Name] = s
	}
	var headers, arguments []string
	for op := range api.Operations(doc) {
		spec, ok := tools[op.OperationID]
		for _, p := range op.Parameters {
			if !ok || op.Method != "GET" || p.In != "header" {
				continue
			}
			headers = append(headers, op.OperationID+" "+p.Name)
			var schema struct{ Properties map[string]any }
			if err := json.Unmarshal(spec.tool.RawInputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			if _, arg := schema.Properties[p.Name]; arg || slices.ContainsFunc(spec.params,
				func(a param) bool { return a.name == p.Name }) {
				arguments = append(arguments, op.OperationID+" "+p.Name)
			}
		}
	}
	if diff := cmp.Diff([]string{"get-brand If-None-Match"}, headers); diff != "" {
		t.Fatalf("header parameters of tools' GETs (-want +got):\n%s", diff)
	}
	if len(arguments) > 0 {
		t.Fatalf("header parameters that became tool arguments: %v", arguments)
	}
}

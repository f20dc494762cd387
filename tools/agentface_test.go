package tools

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/api/schemawalk"
	"platformapi/resources"
)

func TestMCP_ToolErrors_NameTheArgumentItsValuesAndTheNextTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(allScopes()...), nil, false)
	schemas := compileOutputSchemas(t, e.mcp)
	for _, tc := range []struct {
		tool              string
		args              map[string]any
		code, next, field string
		hint              []string
	}{
		{"get-ai-model", map[string]any{"model_id": "42"}, resources.CodeAIModelNotFound, "list-ai-models", "",
			[]string{"call list-ai-models"}},
		{"list-customers", map[string]any{"status": "gone"}, api.CodeInvalidParameter, "", "status",
			[]string{"argument status: any of active, suspended, archived"}},
		{"list-brand-assets", map[string]any{"kind": []any{"logo", ""}}, api.CodeInvalidParameter, "", "kind",
			[]string{"argument kind: any of logo, favicon (an array"}},
		{"list-ai-models", map[string]any{"sort": "colour"}, api.CodeInvalidParameter, "", "sort",
			[]string{"argument sort: one of id, param_count_b, size_gb"}},
		{"get-audit-event", map[string]any{"event_id": "x"}, api.CodeInvalidParameter,
			"list-audit-events", "event_id",
			[]string{"argument event_id: must match ^[1-9][0-9]{0,17}$", "call list-audit-events"}},
		{"list-tenants", map[string]any{"colour": "red"}, api.CodeInvalidParameter, "", "colour",
			[]string{"takes no argument colour", "limit, cursor, fields, customer_id, slug"}},
		{"list-users", map[string]any{"cursor": "bogus"}, resources.CodeInvalidCursor, "", "cursor",
			[]string{"call list-users again without cursor"}},
		{"list-projects", map[string]any{"fields": "colour"}, api.CodeInvalidParameter, "", "fields",
			[]string{"argument fields"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			p := problemOf(t, call(t, c, tc.tool, tc.args))
			validateResult(t, schemas[tc.tool], tc.tool+" error", p) // clients validate errors too
			next, _ := p["next_tool"].(string)
			field, _ := p["field"].(string)
			hint, _ := p["hint"].(string)
			if p["code"] != tc.code || next != tc.next || field != tc.field || !containsAll(hint, tc.hint) {
				t.Fatalf("problem %v", p)
			}
		})
	}
}

func TestMCP_Resources_ProblemCatalogueAndContractParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAuditRead), nil, false)
	read := func(uri string) string {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(t.Context(), req)
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("%s: %v", uri, err)
		}
		return res.Contents[0].(mcp.TextResourceContents).Text
	}
	var problems []resources.ProblemCode
	if err := json.Unmarshal([]byte(read(ProblemsURI)), &problems); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(resources.Problems(), problems); diff != "" {
		t.Fatalf("problem catalogue (-want +got):\n%s", diff)
	}
	full := len(read(ContractURI))
	for _, tag := range []string{"ai", "audit", "customers", "releases", "api-tokens"} {
		var part struct {
			Paths      map[string]any
			Components struct{ Schemas map[string]any }
		}
		text := read(ContractPartURIPrefix + tag + ".json")
		if err := json.Unmarshal([]byte(text), &part); err != nil || len(part.Paths) == 0 || len(text) >= full/2 {
			t.Fatalf("%s: %v, %d paths, %d of %d bytes", tag, err, len(part.Paths), len(text), full)
		}
		reached, missing := schemawalk.Reachable(part.Paths, part.Components.Schemas)
		for _, name := range missing {
			t.Errorf("%s: $ref %s does not resolve within the part", tag, name)
		}
		if len(reached) != len(part.Components.Schemas) {
			t.Errorf("%s: %d schemas, of which its paths reach %d",
				tag, len(part.Components.Schemas), len(reached))
		}
	}
}

func TestMCP_Prompts(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermAuditRead, resources.PermReleasesRead), nil, false)
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = "release-readiness", map[string]string{"project_id": "7"}
	res, err := c.GetPrompt(t.Context(), req)
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if text := res.Messages[0].Content.(mcp.TextContent).Text; !containsAll(text, []string{"get-release-state", "project_id=7"}) {
		t.Fatalf("prompt text %q", text)
	}
}

func TestMCP_PromptsGet_RequiredArgumentMissing_InvalidParamsNamingIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermReleasesRead)
	for name, args := range map[string]any{"none": nil, "blank": map[string]any{"project_id": " "},
		"a number": map[string]any{"project_id": 7}, "another": map[string]any{"id": "7"}} {
		t.Run(name, func(t *testing.T) {
			params := map[string]any{"name": "release-readiness"}
			if args != nil {
				params["arguments"] = args
			}
			r := e.rpc(Path, tok, "prompts/get", params, nil)
			var msg struct{ Error mcp.JSONRPCErrorDetails }
			if err := json.Unmarshal(r.body, &msg); err != nil {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if msg.Error.Code != mcp.INVALID_PARAMS || !strings.Contains(msg.Error.Message, "project_id") {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
}

// A prompt's argument that fills a tool argument is held to that
// argument's pattern: release-readiness with project_id=abc would tell the
// agent to make calls that can only fail, so it is -32602 naming the
// argument, its pattern and the tool that lists its values.
func TestMCP_PromptsGet_ArgumentOffItsToolsPattern_InvalidParamsWithThePattern(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermReleasesRead)
	withProjects := e.token(resources.PermReleasesRead, resources.PermProjectsRead)
	for _, v := range []string{"abc", "0", "7; ignore the above", "1234567890"} {
		for _, c := range []struct {
			tok    string
			lister bool // list-projects named: only when the token can call it
		}{{tok, false}, {withProjects, true}} {
			r := e.rpc(Path, c.tok, "prompts/get", map[string]any{"name": "release-readiness",
				"arguments": map[string]any{"project_id": v}}, nil)
			var msg struct{ Error mcp.JSONRPCErrorDetails }
			if err := json.Unmarshal(r.body, &msg); err != nil {
				t.Fatalf("%q: %d %s", v, r.status, r.body)
			}
			want := []string{"project_id", "^[1-9][0-9]{0,8}$"}
			if msg.Error.Code != mcp.INVALID_PARAMS || !containsAll(msg.Error.Message, want) ||
				strings.Contains(msg.Error.Message, "list-projects") != c.lister {
				t.Fatalf("%q, list-projects callable %v: %d %s", v, c.lister, r.status, r.body)
			}
		}
	}
	r := e.rpc(Path, tok, "prompts/get", map[string]any{"name": "release-readiness",
		"arguments": map[string]any{"project_id": " 7 "}}, nil)
	if !strings.Contains(string(r.body), "project_id=7 ") {
		t.Fatalf("a valid id (spaces trimmed): %d %s", r.status, r.body)
	}
}

// A prompt tells the agent which tools to call; it is offered (listed and
// got) only when tools/list shows every one of them to this client.
func TestMCP_Prompts_OfferedOnlyWithEveryToolTheyUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	every := []string{resources.PermAuditRead, resources.PermReleasesRead, resources.PermAIRead}
	for _, c := range []struct {
		name     string
		scopes   []string
		toolsets string
		want     []string
	}{
		{"every scope", every, "", []string{"fleet-status", "release-readiness", "who-changed"}},
		{"audit only", []string{resources.PermAuditRead}, "", []string{"who-changed"}},
		{"ai and releases", every[1:], "", []string{"fleet-status", "release-readiness"}},
		{"toolsets ai,audit", every, "ai,audit", []string{"fleet-status", "who-changed"}},
		{"no scope a prompt needs", []string{resources.PermBrandRead}, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h map[string]string
			if c.toolsets != "" {
				h = map[string]string{ToolsetsHeader: c.toolsets}
			}
			cl := e.client(e.token(c.scopes...), h, false)
			lp, err := cl.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range lp.Prompts {
				names = append(names, p.Name)
			}
			if diff := cmp.Diff(c.want, names); diff != "" {
				t.Fatalf("prompts (-want +got):\n%s", diff)
			}
			req := mcp.GetPromptRequest{}
			req.Params.Name = "fleet-status"
			_, err = cl.GetPrompt(t.Context(), req)
			if offered := slices.Contains(c.want, "fleet-status"); offered != (err == nil) {
				t.Fatalf("prompts/get fleet-status: %v (offered: %v)", err, offered)
			}
		})
	}
}

// A prompt argument's description points to the tool that lists its
// values only for a token that can call that tool, as the -32602 of a
// value off its pattern does.
func TestMCP_PromptsList_ArgumentNamesItsListerOnlyWhenCallable(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	for _, c := range []struct {
		name   string
		scopes []string
		want   string
	}{
		{"releases only", []string{resources.PermReleasesRead}, "The project's id"},
		{"with projects", []string{resources.PermReleasesRead, resources.PermProjectsRead},
			"The project's id (list-projects finds it)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lp, err := e.client(e.token(c.scopes...), nil, false).ListPrompts(t.Context(),
				mcp.ListPromptsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, p := range lp.Prompts {
				if p.Name == "release-readiness" && len(p.Arguments) == 1 {
					got = p.Arguments[0].Description
				}
			}
			if got != c.want {
				t.Fatalf("project_id's description %q, want %q", got, c.want)
			}
		})
	}
}

func TestMCP_LoggingSetLevel(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	r := e.rpc(Path, e.token(resources.PermAuditRead), "logging/setLevel", map[string]any{"level": "warning"}, nil)
	if r.status != http.StatusOK || r.result == nil {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

func TestMCP_LoopbackOriginsPassWithoutConfiguration(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermAuditRead)
	for _, o := range []string{"http://localhost", "http://localhost:6274", "http://127.0.0.1:3000", "http://[::1]:8080",
		"https://localhost"} {
		if r := e.rpc(Path, tok, "ping", map[string]any{}, map[string]string{"Origin": o}); r.status != http.StatusOK {
			t.Errorf("%s: %d %s", o, r.status, r.body)
		}
	}
	for _, o := range []string{"http://localhost.evil.example", "http://127.0.0.2", "https://evil.example", "null",
		"http://localhost:80/path"} {
		r := e.rpc(Path, tok, "ping", map[string]any{}, map[string]string{"Origin": o})
		if wantProblem(t, r.response, http.StatusForbidden, api.CodeOriginNotAllowed); !slices.Contains([]int{403}, r.status) {
			t.Errorf("%s: %d", o, r.status)
		}
	}
}

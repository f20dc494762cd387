package tools

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/resources"
)

// listerExempt are the required arguments no list tool lists, with why.
var listerExempt = map[string]string{}

// TestDerive_EveryRequiredArgumentHasItsListerOrIsExempt: every required
// argument of every tool is named by a list tool derived from the
// declarations (the items' key and the path), or is exempt above with a
// reason; and the derived mapping is the one a person would write.
func TestDerive_EveryRequiredArgumentHasItsListerOrIsExempt(t *testing.T) {
	e := newEnv(t)
	got := map[string]string{}
	for _, s := range e.mcp.specs {
		for _, p := range s.params {
			if !p.required {
				continue
			}
			arg := s.tool.Name + " " + p.name
			l, exempt := s.listers[p.name], listerExempt[arg]
			switch {
			case l == "" && exempt == "":
				t.Errorf("%s: no list tool lists its values; derive one or exempt it", arg)
			case l != "":
				got[arg] = l
			}
		}
	}
	want := map[string]string{
		"get-ai-gateway-key key_id": "list-ai-gateway-keys", "get-ai-model model_id": "list-ai-models",
		"get-ai-node hostname": "list-ai-nodes", "get-api-token token_id": "list-api-tokens",
		"get-audit-event event_id": "list-audit-events", "get-brand-asset asset_id": "list-brand-assets",
		"get-customer customer_id": "list-customers", "get-prod-lock project_id": "list-projects",
		"get-project project_id": "list-projects", "get-release-state project_id": "list-projects",
		"get-release-operation release_operation_id": "list-fleet-release-operations",
		"get-operation operation_id":                 "list-operations",
		"get-tenant tenant_id":                       "list-tenants", "get-user user_id": "list-users",
		"list-release-operations project_id": "list-projects",
	}
	for arg := range listerExempt { // an exempt argument that gained a lister needs no exemption
		delete(got, arg)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("listers (-want +got):\n%s", d)
	}
}

// TestMCP_MissingOrEmptyRequiredArgument_NamesTheToolListingItsValues: a
// tool called without a required argument, with it null or empty, answers
// the 400 invalid_parameter tool error naming the argument, with
// next_tool the list tool of its values and the hint to call it.
func TestMCP_MissingOrEmptyRequiredArgument_NamesTheToolListingItsValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	c := e.client(e.token(allScopes()...), nil, false)
	for _, s := range e.mcp.specs {
		for _, arg := range slices.Sorted(maps.Keys(s.listers)) {
			lister := s.listers[arg]
			for _, args := range []map[string]any{otherArgs(s, arg), with(otherArgs(s, arg), arg, nil),
				with(otherArgs(s, arg), arg, "")} {
				p := problemOf(t, call(t, c, s.tool.Name, args))
				hint, _ := p["hint"].(string)
				if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != arg ||
					p["next_tool"] != lister || !strings.Contains(hint, "call "+lister) {
					t.Errorf("%s %v: %v", s.tool.Name, args, p)
				}
			}
		}
	}
}

// otherArgs are valid values of the tool's required arguments but arg.
func otherArgs(s toolSpec, arg string) map[string]any {
	out := map[string]any{}
	for _, p := range s.params {
		if p.required && p.name != arg {
			out[p.name] = "1"
		}
	}
	return out
}

// with is args with name set to v.
func with(args map[string]any, name string, v any) map[string]any {
	out := maps.Clone(args)
	out[name] = v
	return out
}

// TestMCP_ToolErrorHint_NamesOnlyToolsTheTokenCanCall: next_tool and the
// hint to call it name a tool only when the token's effective scopes can
// call it (tools/list shows it); a releases-only token that asks for the
// release state of an unknown project is not sent to list-projects, which
// would only answer 403, while a token that can list projects is.
func TestMCP_ToolErrorHint_NamesOnlyToolsTheTokenCanCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	args := map[string]any{"project_id": "999"}
	for _, c := range []struct {
		scopes []string
		next   string
	}{
		{[]string{resources.PermReleasesRead}, ""},
		{[]string{resources.PermReleasesRead, resources.PermProjectsRead}, "list-projects"},
	} {
		p := problemOf(t, call(t, e.client(e.token(c.scopes...), nil, false), "get-release-state", args))
		next, _ := p["next_tool"].(string)
		hint, _ := p["hint"].(string)
		if p["code"] != resources.CodeProjectNotFound || next != c.next ||
			(c.next == "" && strings.Contains(hint, "list-projects")) {
			t.Errorf("%v: %v", c.scopes, p)
		}
	}
}

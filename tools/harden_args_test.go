package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/resources"
)

// unknownArgs are n arguments no tool takes: x00000, x00001, …
func unknownArgs(n int) map[string]any {
	args := make(map[string]any, n)
	for i := range n {
		args[fmt.Sprintf("x%05d", i)] = 1
	}
	return args
}

// Issue 18, R6 (MCP side): unknown arguments travel as query parameters,
// and a query of more than 1000 pairs is refused whole (url.ParseQuery
// drops pairs past 10,000, which would go unchecked). A tools/call with up
// to 1000 unknown arguments is a tool error naming each; past 1000, and
// past url.ParseQuery's 10,000, a tool error saying the call has too many —
// never the unfiltered list.
func TestMCP_MoreUnknownArgumentsThanTheQueryLimit_ToolErrorSayingSo(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead), nil, false)
	for _, n := range []int{1000, 1001, 10_001} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			args := unknownArgs(n)
			p := problemOf(t, call(t, c, "list-tenants", args))
			if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter {
				t.Fatalf("status %v code %v", p["status"], p["code"])
			}
			errs, _ := p["errors"].([]any)
			d, _ := p["detail"].(string)
			switch _, named := args[fmt.Sprint(p["field"])]; {
			case n <= 1000 && (!named || len(errs) != n):
				t.Fatalf("field %v, %d errors for %d unknown arguments", p["field"], len(errs), n)
			case n > 1000 && !strings.Contains(d, "more than 1000"):
				t.Fatalf("%d unknown arguments: detail %q", n, d)
			}
		})
	}
}

// TestMCP_MoreArgumentsThanTheQueryLimit_HintNamesNoEmptyArgument: the tool
// error past the limit of arguments names no argument at fault (it has no
// field), so its hint must not tell the agent that the tool takes no
// argument "" (the hint of an empty field, given before the fix).
func TestMCP_MoreArgumentsThanTheQueryLimit_HintNamesNoEmptyArgument(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead), nil, false)
	p := problemOf(t, call(t, c, "list-tenants", unknownArgs(1001)))
	if p["field"] != nil {
		t.Fatalf("field %v on a refusal of the whole call", p["field"])
	}
	if h, _ := p["hint"].(string); strings.Contains(h, "takes no argument ;") {
		t.Fatalf("the hint names an empty argument: %q", h)
	}
}

// Audit E1: an argument whose input schema takes one value (a string, an
// integer, a boolean) given a JSON array or object is a tool error, 400
// invalid_parameter naming the argument and the type it takes; before, the
// array became a comma-joined filter (["ACME","BETA"] the short name
// "ACME,BETA", which found nothing) and the object its JSON text. A
// multi-valued argument still takes an array or one comma-separated string,
// but not an object, nor arrays or objects as its items.
func TestMCP_SingleValuedArgumentGivenArrayOrObject_ToolErrorNamingTheType(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead, resources.PermProjectsRead), nil, false)
	for _, tc := range []struct {
		tool, arg string
		value     any
		want      string
	}{
		{"list-customers", "short_name", []any{"ACME", "BETA"}, "must be a string, not an array"},
		{"list-customers", "short_name", map[string]any{"a": 1}, "must be a string, not an object"},
		{"get-customer", "customer_id", []any{"1"}, "must be a string, not an array"},
		{"list-customers", "limit", []any{5}, "must be an integer, not an array"},
		{"list-projects", "prod_locked", map[string]any{}, "must be a boolean, not an object"},
		{"list-customers", "status", map[string]any{"a": "active"}, "an array of strings"},
		{"list-customers", "status", []any{[]any{"active"}}, "an array of strings"},
	} {
		t.Run(tc.tool+" "+tc.arg, func(t *testing.T) {
			p := problemOf(t, call(t, c, tc.tool, map[string]any{tc.arg: tc.value}))
			d, _ := p["detail"].(string)
			if p["status"] != 400.0 || p["code"] != api.CodeInvalidParameter || p["field"] != tc.arg ||
				!strings.HasPrefix(d, tc.arg+": ") || !strings.Contains(d, tc.want) {
				t.Fatalf("%v: %v", tc.value, p)
			}
		})
	}
	for _, status := range []any{[]any{"active", "suspended"}, "active,suspended"} {
		if res := call(t, c, "list-customers", map[string]any{"status": status}); res.IsError {
			t.Fatalf("status %v: %s", status, resultText(t, res))
		}
	}
}

// Audit E8: the unknown-argument hint of a tool that takes no arguments
// says so, instead of ending in an empty list of its arguments.
func TestMCP_UnknownArgumentOfAToolWithoutArguments_HintSaysItTakesNone(t *testing.T) {
	e := newEnv(t).enableAPI()
	c := e.client(e.token(resources.PermTenancyRead), nil, false)
	p := problemOf(t, call(t, c, "get-meta", map[string]any{"customer_id": "1"}))
	if p["code"] != api.CodeInvalidParameter || p["field"] != "customer_id" ||
		p["hint"] != "the tool takes no arguments" {
		t.Fatalf("problem %v", p)
	}
}

// Agent walk: arguments that are not a JSON object (an array, a string)
// are refused as a whole call; the hint names the arguments the tool
// takes, which it left out before (the tool error had no hint at all).
func TestMCP_ArgumentsNotAnObject_HintNamesTheToolsArguments(t *testing.T) {
	e := newEnv(t).enableAPI()
	tok := e.token(resources.PermTenancyRead)
	for tool, want := range map[string]string{"get-customer": "its arguments: customer_id, include",
		"get-meta": "the tool takes no arguments"} {
		for _, args := range []any{[]any{}, "customer_id=1"} {
			r := e.rpc(Path, tok, "tools/call", map[string]any{"name": tool, "arguments": args}, nil)
			var res struct {
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
			}
			if err := json.Unmarshal(r.result, &res); err != nil || !res.IsError {
				t.Fatalf("%s %v: %d %s", tool, args, r.status, r.body)
			}
			p := res.StructuredContent
			if h, _ := p["hint"].(string); p["code"] != api.CodeInvalidParameter || !strings.Contains(h, want) {
				t.Fatalf("%s %v: %v", tool, args, p)
			}
		}
	}
}

package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"platformapi/api"
	"platformapi/resources"
)

// hint adds to a tool error's problem what an agent needs to recover:
// `hint`, words naming the argument at fault with its valid values or
// pattern (or the valid arguments), and `next_tool`, the tool to call next
// where one helps (from the problem-code catalogue, or the list tool of the
// values of the argument at fault), named only when the calling token can
// call it (see callable).
func (m *MCP) hint(ctx context.Context, spec toolSpec, problem map[string]any) {
	code, _ := problem["code"].(string)
	field, _ := problem["field"].(string)
	var hints []string
	next := ""
	if c, ok := resources.ProblemByCode(code); ok && c.Next != "" {
		next = c.Next
	}
	switch code {
	case api.CodeInvalidParameter:
		if field != "" {
			hints = append(hints, spec.argumentHint(field))
		} else { // the call as a whole (not an object, too many arguments): what it takes
			hints = append(hints, spec.argumentsHint())
		}
		if l := spec.listers[field]; l != "" && m.callable(ctx, l) { // the tool listing valid ids
			next = l
		}
	case resources.CodeInvalidCursor:
		hints = append(hints, "call "+spec.tool.Name+" again without cursor to start from the first page")
	case resources.CodeResultTooLarge:
		if spec.list {
			hints = append(hints, spec.argumentHint("fields"))
		} else if l := spec.recordLister(); l != "" && m.callable(ctx, l) {
			next = l
			hints = append(hints, "call "+l+" with fields naming the members you need, "+
				"without those the detail names")
		}
	}
	if next != "" && m.callable(ctx, next) {
		problem["next_tool"] = next
		named := func(h string) bool { return strings.HasPrefix(h, "call "+next+" ") }
		if !slices.ContainsFunc(hints, named) {
			hints = append(hints, "call "+next)
		}
	}
	if hints = slices.DeleteFunc(hints, func(s string) bool { return s == "" }); len(hints) > 0 {
		problem["hint"] = strings.Join(hints, "; ")
	}
}

// argumentsHint names the arguments the tool takes, or says it takes none.
func (s toolSpec) argumentsHint() string {
	if len(s.params) == 0 {
		return "the tool takes no arguments"
	}
	names := make([]string, 0, len(s.params))
	for _, p := range s.params {
		names = append(names, p.name)
	}
	return "its arguments: " + strings.Join(names, ", ")
}

// argumentHint names an argument with its valid values, pattern or bounds;
// an argument the tool does not take gets the list of those it does, or
// that it takes none.
func (s toolSpec) argumentHint(name string) string {
	prop, ok := s.inputProps[name]
	if !ok && len(s.params) == 0 {
		return "the tool takes no arguments"
	}
	if !ok {
		return "the tool takes no argument " + name + "; " + s.argumentsHint()
	}
	h := "argument " + name
	items, _ := prop["items"].(map[string]any)
	switch {
	case items["enum"] != nil:
		h += ": any of " + joinAny(items["enum"]) + " (an array, or one comma-separated string)"
	case prop["enum"] != nil:
		h += ": one of " + joinAny(prop["enum"])
	case prop["pattern"] != nil:
		h += fmt.Sprintf(": must match %v", prop["pattern"])
	case prop["minimum"] != nil || prop["maximum"] != nil:
		h += fmt.Sprintf(": from %v to %v", prop["minimum"], prop["maximum"])
	}
	if d, _ := prop["description"].(string); d != "" {
		h += " (" + d + ")"
	}
	return h
}

// callable reports whether a tool of that name exists and the token of the
// call ctx belongs to can call it: its effective scopes hold one of the
// tool's keys, as tools/list requires. A hint never sends an agent to a
// tool that would only answer 403.
func (m *MCP) callable(ctx context.Context, name string) bool {
	s, ok := m.byName[name]
	outer, found := outerFrom(ctx)
	return ok && found && outer.cred != nil && outer.cred.Holds(s.permissions...)
}

// recordLister is the list tool of the record a single-record tool reads:
// the lister of its last path argument (list-audit-events for
// /audit-events/{event_id}), or "".
func (s toolSpec) recordLister() string {
	i := strings.LastIndex(s.path, "/{")
	if i < 0 {
		return ""
	}
	name, _, _ := strings.Cut(s.path[i+2:], "}")
	return s.listers[name]
}

// tooLarge is the problem of a result (body) that passes its budget. For a
// single record the detail names the members to leave out and the record's
// REST path (its template filled with the call's path arguments).
func (m *MCP) tooLarge(spec toolSpec, body []byte, budget int, path map[string]string) error {
	d := fmt.Sprintf("the result is about %d estimated tokens, over the MCP budget of %d",
		api.EstimateTokens(len(body)), budget)
	if spec.list {
		d += "; pass fields with the members you need"
	} else {
		if out := membersOver(body, api.DefaultPageBudget); len(out) > 0 {
			d += "; leave out " + strings.Join(out, ", ")
		}
		d += "; or read it over REST at GET " + api.Prefix + fillPath(spec.path, path)
	}
	return &api.Problem{Status: 413, Code: resources.CodeResultTooLarge, Detail: d}
}

// membersOver names the top-level members of the JSON object body, largest
// first, that must be left out for the rest to fit budget estimated tokens
// (nil when body is no object).
func membersOver(body []byte, budget int) []string {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil
	}
	names := slices.Collect(maps.Keys(members))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(len(members[b])-len(members[a]), strings.Compare(a, b))
	})
	var out []string
	for size, i := len(body), 0; size > budget*api.BytesPerToken && i < len(names); i++ {
		out = append(out, names[i])
		size -= len(members[names[i]]) + len(names[i]) + len(`"":,`)
	}
	return out
}

// fillPath is an operation's path template with each {name} replaced by
// the path argument of that name, escaped as a path segment.
func fillPath(template string, args map[string]string) string {
	for name, v := range args {
		template = strings.ReplaceAll(template, "{"+name+"}", url.PathEscape(v))
	}
	return template
}

func joinAny(v any) string {
	arr, _ := v.([]any)
	parts := make([]string, len(arr))
	for i, e := range arr {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ", ")
}

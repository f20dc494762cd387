package tools

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
	"platformapi/resources"
)

// api.CodeInvalidParameter is the api package's code for a bad path or query
// parameter; a tool argument is one.

// decodeArgs reads a call's arguments as a JSON object, keeping numbers
// exact (json.Number). No arguments at all is an empty object.
func decodeArgs(req mcp.CallToolRequest) (map[string]any, error) {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return nil, err
		}
	}
	args := map[string]any{}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, &resources.Error{Kind: resources.KindBadRequest, Code: api.CodeInvalidParameter,
			Detail: "the arguments must be a JSON object"}
	}
	return args, nil
}

// checkTypes refuses an argument whose JSON value its parameter cannot
// take: an array or an object where the input schema takes one value (a
// string, an integer, a boolean), and, where it takes an array, an object
// or items that are arrays or objects. Each is 400 invalid_parameter naming
// the argument and the type it takes (before, an array became a
// comma-joined filter and an object its JSON text). A scalar of another
// type is spelled as a query string carries it (argString), and the
// operation checks it as it checks REST's.
func (s toolSpec) checkTypes(args map[string]any) error {
	for _, p := range s.params {
		v, ok := args[p.name]
		if !ok {
			continue
		}
		if msg := s.typeProblem(p.name, v); msg != "" {
			return &resources.Error{Kind: resources.KindBadRequest, Code: api.CodeInvalidParameter,
				Field: p.name, Detail: p.name + ": " + msg}
		}
	}
	return nil
}

// typeProblem says why v cannot be the value of the argument name, or "".
func (s toolSpec) typeProblem(name string, v any) string {
	prop := s.inputProps[name]
	typ, _ := prop["type"].(string)
	if typ != "array" {
		if typ == "" || !compound(v) {
			return ""
		}
		return "must be " + typeNames[typ][0] + ", not " + kindOf(v)
	}
	items, _ := prop["items"].(map[string]any)
	itemType, _ := items["type"].(string)
	want := "must be an array of " + cmp.Or(typeNames[itemType][1], "values") +
		" or one comma-separated string, not "
	switch x := v.(type) {
	case map[string]any:
		return want + "an object"
	case []any:
		for _, e := range x {
			if compound(e) {
				return want + "an array of " + strings.TrimPrefix(kindOf(e), "an ") + "s"
			}
		}
	}
	return ""
}

// typeNames names a JSON Schema type: one value, several.
var typeNames = map[string][2]string{
	"string": {"a string", "strings"}, "integer": {"an integer", "integers"},
	"number": {"a number", "numbers"}, "boolean": {"a boolean", "booleans"},
}

// compound reports whether a decoded JSON value is an array or an object.
func compound(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// kindOf names the kind of an array or object value.
func kindOf(v any) string {
	if _, ok := v.([]any); ok {
		return "an array"
	}
	return "an object"
}

// call is the in-process call of the operation for the arguments: path
// arguments by name, query arguments in the operation's array style;
// unknown arguments are forwarded as query parameters so that Huma refuses
// them with its own problem document. A missing or empty path argument is
// refused by api.Server.Invoke (400 invalid_parameter naming it).
func (s toolSpec) call(args map[string]any) api.Call {
	c := api.Call{Operation: s.tool.Name, Query: make(url.Values, len(args))}
	for name, v := range args {
		p, ok := s.param(name)
		switch {
		case !ok: // unknown: Huma refuses it by name
			c.Query.Set(name, argString(v))
		case v == nil:
		case p.in == "path":
			if c.Path == nil {
				c.Path = make(map[string]string, 1)
			}
			c.Path[name] = argString(v)
		default:
			addQuery(c.Query, p, v)
		}
	}
	return c
}

// param is the operation's parameter called name.
func (s toolSpec) param(name string) (param, bool) {
	for _, p := range s.params {
		if p.name == name {
			return p, true
		}
	}
	return param{}, false
}

// addQuery adds one query argument: an array as repeated keys when the
// parameter explodes, else comma-separated (Huma's default).
func addQuery(q url.Values, p param, v any) {
	arr, ok := v.([]any)
	if !ok || !p.explode {
		q.Set(p.name, argString(v))
		return
	}
	for _, e := range arr {
		q.Add(p.name, argString(e))
	}
}

// argString spells a JSON argument the way a query string or path carries
// it: strings as they are, numbers exactly (an integral float such as 50.0
// or 5e1 as an integer), booleans as true/false, arrays comma-separated and
// objects as their JSON.
func argString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return numberString(x)
	case float64:
		return numberString(json.Number(strconv.FormatFloat(x, 'f', -1, 64)))
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = argString(e)
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// numberString keeps integers exact and turns an integral non-integer
// spelling into an integer, which Huma's integer parameters accept.
func numberString(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return s
	}
	return strconv.FormatInt(int64(f), 10)
}

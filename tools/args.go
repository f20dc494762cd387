package tools

import (
	"bytes"
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

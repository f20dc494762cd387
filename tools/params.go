package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// unparsedKey keys the context value in which noteUnparsable leaves why
// mcp-go could not read a message's params.
type unparsedKey struct{}

// unparsed is why mcp-go could not read the params of the message being
// answered (nil: it could).
type unparsed struct{ err error }

// withUnparsed returns ctx carrying an empty unparsed, and that value.
func withUnparsed(ctx context.Context) (context.Context, *unparsed) {
	u := &unparsed{}
	return context.WithValue(ctx, unparsedKey{}, u), u
}

// noteUnparsable is mcp-go's OnError hook: when it could not decode a
// request of its method (an UnparsableMessageError, answered -32600 with the
// decoder's words), it keeps the decoder's error for paramsProblem.
func noteUnparsable(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, err error) {
	var bad *server.UnparsableMessageError
	if u, ok := ctx.Value(unparsedKey{}).(*unparsed); ok && errors.As(err, &bad) {
		u.err = bad.Unwrap()
	}
}

// paramsProblem rewrites the answer to a request whose params mcp-go could
// not decode (a member of the wrong type: "name": 5) as Invalid params
// (-32602, JSON-RPC's code for bad params, which MCP uses for the others),
// naming the member and the type it takes instead of Go's struct and type
// names. Other answers are returned as they are.
func paramsProblem(e mcp.JSONRPCError, u *unparsed) mcp.JSONRPCError {
	if u == nil || u.err == nil || e.Error.Code != mcp.INVALID_REQUEST {
		return e
	}
	e.Error.Code = mcp.INVALID_PARAMS
	e.Error.Message = "the params do not have the shape MCP defines for this method"
	var typeErr *json.UnmarshalTypeError
	if !errors.As(u.err, &typeErr) || typeErr.Type == nil {
		return e
	}
	path := typeErr.Field
	if i := strings.Index("."+path, ".params."); i >= 0 {
		path = path[i:]
	}
	e.Error.Message = path + " must be " + goTypeName(typeErr.Type) + ", not " +
		jsonValueName(typeErr.Value)
	return e
}

// goTypeName is the JSON type a Go type is read from, with its article.
func goTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Interface, reflect.Pointer:
		return "another value"
	}
	return "a number"
}

// jsonValueName names the JSON value the decoder found (its Value: "bool",
// "number", "number 1.5", "string", "array", "object").
func jsonValueName(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "array", v == "object":
		return "an " + v
	}
	return "a string"
}

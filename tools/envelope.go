package tools

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
)

// rpcMessage is what the guard reads of a POST /mcp body: the JSON-RPC
// envelope and, for tools/call, the tool's name, and the request's _meta.
type rpcMessage struct {
	body    []byte          // the whole message
	parsed  bool            // the body is JSON (else a parse error)
	invalid string          // why the JSON is no JSON-RPC request or response ("" if it is one)
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
	Params  struct {
		Name string          `json:"name"`
		Meta json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// readMessage reads the envelope of body with the standard decoder (a
// client's bytes). A body that is not JSON yields the zero message: no
// method, no tool, not parsed. JSON that is neither a request nor a
// response (a batch, another value than an object, a member of the wrong
// type, a bad id) says why in invalid, with what could be read of it.
func readMessage(body []byte) rpcMessage {
	msg := rpcMessage{body: body}
	err := json.Unmarshal(body, &msg)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) { // Unmarshal checks the syntax first
		return rpcMessage{body: body}
	}
	msg.parsed = true
	if msg.invalid = shapeProblem(body, typeErr); msg.invalid == "" {
		msg.invalid = msg.problem()
	}
	if msg.Method != string(mcp.MethodToolsCall) {
		msg.Params.Name = ""
	}
	return msg
}

// shapeProblem says why valid JSON is no JSON-RPC message, or "": a batch
// (not supported: MCP 2025-06-18 removed them), another value than one
// object, or an envelope member of the wrong type (typeErr, the decoder's
// first). A member of params of the wrong type is left to mcp-go, which
// reads params itself.
func shapeProblem(body []byte, typeErr *json.UnmarshalTypeError) string {
	switch t := bytes.TrimLeft(body, " \t\r\n"); t[0] {
	case '{':
	case '[':
		return "batches are not supported: send one JSON-RPC request per POST"
	case '"':
		return "the message must be one JSON-RPC request object, not a string"
	case 'n':
		return "the message must be one JSON-RPC request object, not null"
	case 't', 'f':
		return "the message must be one JSON-RPC request object, not a boolean"
	default:
		return "the message must be one JSON-RPC request object, not a number"
	}
	if typeErr == nil {
		return ""
	}
	switch typeErr.Field {
	case "method":
		return "the method must be a string"
	case "params":
		return "the params must be an object"
	case "jsonrpc":
		return `jsonrpc must be the string "2.0"`
	}
	return ""
}

// problem says why msg is no JSON-RPC request or response (an Invalid
// Request), or "": its id is not a string or an integer (MCP; null only on
// a response, which answers a request whose id was unreadable), or it has
// an id and no method and carries neither result nor error, so that it is
// no response either.
func (msg rpcMessage) problem() string {
	id := msg.ID
	switch {
	case len(id) == 0, id[0] == '"', integerID(id):
	case string(id) == "null" && msg.Method == "" && msg.answers():
	case string(id) == "null":
		return "the id must be a string or an integer, not null: a message without an answer " +
			"leaves the id out (a notification)"
	default:
		return "the id must be a string or an integer"
	}
	if len(id) > 0 && msg.Method == "" && !msg.answers() {
		return "the method is missing or empty: a request names its method, and a message with an id " +
			"and no method is a response, which carries a result or an error"
	}
	return ""
}

// answers reports whether msg has a result or an error member (a response).
func (msg rpcMessage) answers() bool { return len(msg.Result) > 0 || len(msg.Error) > 0 }

// integerID reports whether a raw id is an integer as JSON writes one:
// digits after an optional minus sign, no fraction, no exponent.
func integerID(id json.RawMessage) bool {
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// exactIDDigits is the most digits of an integer id float64 always holds
// exactly (10^15 < 2^53).
const exactIDDigits = 15

// withClientID gives resp the request's id exactly as the client wrote it
// when it is an integer a float64 may not hold: JSON-RPC requires the
// response's id to be the request's, and mcp-go reads ids through float64,
// which changes integers past 2^53.
func withClientID(resp mcp.JSONRPCMessage, id json.RawMessage) mcp.JSONRPCMessage {
	if len(bytes.TrimPrefix(id, []byte("-"))) <= exactIDDigits || !integerID(id) {
		return resp
	}
	exact := mcp.NewRequestId(json.Number(id)) // encoded as the digits themselves
	switch r := resp.(type) {
	case mcp.JSONRPCResponse:
		r.ID = exact
		return r
	case mcp.JSONRPCError:
		r.ID = exact
		return r
	}
	return resp
}

// meta is the message's _meta (nil for none or an unreadable one): a
// message of the 2026-07-28 era states its protocol version and the
// client's capabilities there.
func (msg rpcMessage) meta() *mcp.Meta {
	var meta *mcp.Meta
	if len(msg.Params.Meta) == 0 || json.Unmarshal(msg.Params.Meta, &meta) != nil {
		return nil
	}
	return meta
}

// isResponse reports whether msg answers a request: an id and no method.
// This server sends clients no requests.
func (msg rpcMessage) isResponse() bool { return msg.Method == "" && len(msg.ID) > 0 }

// carriesAnswer reports whether a response holds an error or a result other
// than empty (a ping's answer, {}, carries none).
func (msg rpcMessage) carriesAnswer() bool {
	empty := func(raw json.RawMessage) bool {
		t := string(bytes.TrimSpace(raw))
		return t == "" || t == "null" || t == "{}"
	}
	return !empty(msg.Error) || !empty(msg.Result)
}

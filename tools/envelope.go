package tools

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// rpcMessage is what the guard reads of a POST /mcp body: the JSON-RPC
// envelope and, for tools/call, the tool's name, and the request's _meta.
type rpcMessage struct {
	body    []byte          // the whole message
	object  bool            // the body is one JSON object (not a batch, not malformed)
	invalid string          // why the object is no JSON-RPC request or response ("" if it is one)
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
// client's bytes). A batch or an unreadable body yields the zero message:
// no method, no tool, not an object. An object that is neither a request
// nor a response says why in invalid.
func readMessage(body []byte) rpcMessage {
	msg := rpcMessage{body: body}
	if json.Unmarshal(body, &msg) != nil {
		return rpcMessage{body: body}
	}
	msg.object = true
	msg.invalid = msg.problem()
	if msg.Method != string(mcp.MethodToolsCall) {
		msg.Params.Name = ""
	}
	return msg
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

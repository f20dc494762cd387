package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// serve answers one POST /mcp message, admitted by the guard, through
// mcp-go's MCPServer.HandleMessage (the library's entry point for
// transports) under the caller's token session: initialize, lists, tool
// calls, pings, notifications and cancellations alike. The server is
// stateless: no Mcp-Session-Id, no stream; an answer is one
// application/json body, a notification or a client's response 202. The
// checks mcp-go's streamable HTTP transport makes before a message (the
// protocol version of the legacy era, the header rules of the 2026-07-28
// era) are made here first, each a JSON-RPC error (status 400, or as that
// era maps its codes); so is JSON that is neither a JSON-RPC request nor a
// response, an Invalid Request (the transport lets some through and calls
// others, a batch for one, a parse error, which it keeps here for a body
// that is not JSON).
func (m *MCP) serve(w http.ResponseWriter, r *http.Request, msg rpcMessage) {
	if !msg.parsed { // no JSON: the transport's parse error
		refusal := rpcError(nil, mcp.PARSE_ERROR, "request body is not valid json")
		m.writeMessage(w, r, refusal, http.StatusBadRequest)
		return
	}
	era := eraOf(r.Header, msg)
	refusal := checkValid(msg)
	if refusal == nil {
		refusal = era.checkLegacy(msg)
	}
	if refusal == nil && msg.isResponse() { // answers a request this server never sends
		if !era.modern || !msg.carriesAnswer() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		refusal = era.refuse(msg, mcp.INVALID_REQUEST, "client-to-server responses are not supported in "+
			"protocol version "+mcp.ProtocolVersion20260728+
			": server-initiated requests were replaced by multi round-trip requests")
	}
	if refusal == nil {
		refusal = era.checkModern(r.Header, msg)
	}
	if refusal == nil {
		refusal = m.checkPromptArguments(r, msg)
	}
	if refusal != nil {
		m.writeMessage(w, r, refusal, era.status(refusal.Error.Code))
		return
	}
	ctx, unread := withUnparsed(r.Context())
	resp := m.mcp.HandleMessage(ctx, msg.body)
	if resp == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	resp = withClientID(m.explain(ctx, msg, resp, unread), msg.ID)
	status := http.StatusOK
	if e, ok := resp.(mcp.JSONRPCError); ok {
		status = era.status(e.Error.Code)
	}
	m.writeMessage(w, r, resp, status)
}

// writeMessage writes resp as one JSON body with status: a tool's answer
// assembled from its parts (see appendCallResult), anything else encoded by
// encoding/json as mcp-go's transport encodes it.
func (m *MCP) writeMessage(w http.ResponseWriter, r *http.Request, resp mcp.JSONRPCMessage,
	status int) {
	buf := m.answers.Get().(*answerBuffer)
	defer m.release(buf)
	if !buf.appendCallResult(resp) {
		buf.b.Reset()
		if err := buf.enc.Encode(resp); err != nil {
			m.srv.WriteError(w, r, fmt.Errorf("encode an MCP answer: %w", err))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	// The length is known: stated, the answer is sent as it is, not in chunks
	// (net/http chunks an answer over 2 KB of unknown length).
	w.Header().Set("Content-Length", strconv.Itoa(buf.b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.b.Bytes()) // a failed write is a client that left
}

// rpcError is the JSON-RPC error answer to the request with id (the raw id
// as the client sent it, an integer kept exact; nil for none).
func rpcError(id json.RawMessage, code int, message string) mcp.JSONRPCError {
	var v any
	switch {
	case integerID(id):
		v = json.Number(id)
	case len(id) > 0:
		_ = json.Unmarshal(id, &v)
	}
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(v),
		Error: mcp.JSONRPCErrorDetails{Code: code, Message: message}}
}

// era is the protocol era of a message: the version its
// Mcp-Protocol-Version header and its _meta state, and whether either is of
// the 2026-07-28 era (no initialize; the version travels with each request).
type era struct {
	modern         bool
	header, inMeta string
	caps           bool // _meta states the client's capabilities (required in the 2026-07-28 era)
}

// eraOf reads the era of msg sent with header h.
func eraOf(h http.Header, msg rpcMessage) era {
	meta := msg.meta()
	e := era{header: h.Get(mcp.HeaderProtocolVersion), inMeta: meta.ProtocolVersion(),
		caps: meta.ClientCapabilities() != nil}
	e.modern = mcp.IsModernProtocol(e.header) || mcp.IsModernProtocol(e.inMeta)
	return e
}

// refuse is the JSON-RPC error answering msg with code and text.
func (e era) refuse(msg rpcMessage, code int, text string) *mcp.JSONRPCError {
	err := rpcError(msg.ID, code, text)
	return &err
}

// checkValid refuses, as an Invalid Request, a message that is neither a
// JSON-RPC request nor a response (see rpcMessage.problem); its id is
// echoed when it is one a request may carry.
func checkValid(msg rpcMessage) *mcp.JSONRPCError {
	if msg.invalid == "" {
		return nil
	}
	id := msg.ID
	if len(id) == 0 || id[0] != '"' && !integerID(id) {
		id = nil
	}
	err := rpcError(id, mcp.INVALID_REQUEST, msg.invalid)
	return &err
}

// checkLegacy refuses, as mcp-go's transport does, a legacy-era message
// other than initialize whose Mcp-Protocol-Version is not one this server
// speaks; nil otherwise.
func (e era) checkLegacy(msg rpcMessage) *mcp.JSONRPCError {
	if e.modern || msg.Method == string(mcp.MethodInitialize) || e.header == "" ||
		mcp.IsValidProtocolVersion(e.header) {
		return nil
	}
	return e.refuse(msg, mcp.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: "+e.header)
}

// checkModern is what mcp-go's transport refuses of a 2026-07-28 request
// before handling it (nil for a legacy one, or one that may be handled),
// and subscriptions/listen: this server sends no notifications.
func (e era) checkModern(h http.Header, msg rpcMessage) *mcp.JSONRPCError {
	switch {
	case !e.modern:
		return nil
	case h.Get(mcp.HeaderLastEventID) != "":
		return e.refuse(msg, mcp.HEADER_MISMATCH, "Last-Event-ID is not supported in protocol version "+
			mcp.ProtocolVersion20260728+": streams are not resumable, re-issue the request with a new ID")
	case e.header == "":
		return e.refuse(msg, mcp.HEADER_MISMATCH, mcp.HeaderProtocolVersion+
			" header is required for requests carrying "+mcp.MetaKeyProtocolVersion)
	case e.inMeta == "":
		return e.refuse(msg, mcp.INVALID_PARAMS,
			"missing or invalid _meta field "+mcp.MetaKeyProtocolVersion)
	case e.header != e.inMeta:
		return e.refuse(msg, mcp.HEADER_MISMATCH, mcp.HeaderProtocolVersion+" header "+e.header+
			" does not match request "+mcp.MetaKeyProtocolVersion+" "+e.inMeta)
	case !e.caps || !mcp.IsValidProtocolVersion(e.inMeta):
		return nil // HandleMessage refuses it before it would read the headers
	case msg.Method == string(mcp.MethodSubscriptionsListen):
		return e.refuse(msg, mcp.METHOD_NOT_FOUND,
			"this server sends no notifications: there is nothing to listen to")
	}
	return e.checkHeaders(h, msg)
}

// checkHeaders applies the 2026-07-28 rule that the standard headers
// (Mcp-Method, Mcp-Name) agree with the message.
func (e era) checkHeaders(h http.Header, msg rpcMessage) *mcp.JSONRPCError {
	var wrapper struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(msg.body, &wrapper) // a valid message: it parsed once already
	err := mcp.ValidateStandardHeaders(h.Get, e.inMeta, mcp.MCPMethod(msg.Method), wrapper.Params)
	if err != nil {
		return e.refuse(msg, mcp.HEADER_MISMATCH, err.Error())
	}
	return nil
}

// status is the HTTP status of a JSON-RPC error answer: the 2026-07-28 era
// maps codes onto statuses (so intermediaries can act without parsing the
// body); the legacy era answers 200, but 400 for a version it does not
// speak.
func (e era) status(code int) int {
	switch {
	case !e.modern && code == mcp.UNSUPPORTED_PROTOCOL_VERSION:
		return http.StatusBadRequest
	case !e.modern:
		return http.StatusOK
	case code == mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case code == mcp.HEADER_MISMATCH, code == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
		code == mcp.UNSUPPORTED_PROTOCOL_VERSION, code == mcp.INVALID_REQUEST, code == mcp.INVALID_PARAMS,
		code == mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

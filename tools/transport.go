package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"platformapi/api"
	"platformapi/resources"
)

// maxBodyBytes bounds one POST /mcp body (a JSON-RPC message).
const maxBodyBytes = 1 << 20

// ToolsetsHeader narrows tools/list to toolsets, like ?toolsets= on the URL.
const ToolsetsHeader = "X-MCP-Toolsets"

// outerKey carries the outer request's facts into tool handlers.
type outerKey struct{}

// outerRequest is what an in-process tool call takes from its POST /mcp.
type outerRequest struct {
	cred       *resources.Credential // authenticated once, by the guard
	header     http.Header           // the POST's response headers (rate limit, Retry-After)
	remoteAddr string
	host       string
	method     string          // the JSON-RPC method of the message
	toolsets   map[string]bool // nil: every toolset
	refused    error           // the POST's charge was refused (a tools/call answers it as a tool error)
	// rate is, for a tools/call, the token's budget after the POST's
	// charge, and after the in-process GET's when it takes a unit itself
	// (see api.Call.Rate).
	rate *api.RateStatus
}

// outerFrom returns the facts of the POST /mcp request ctx belongs to.
func outerFrom(ctx context.Context) (outerRequest, bool) {
	o, ok := ctx.Value(outerKey{}).(outerRequest)
	return o, ok
}

// handle answers POST /mcp, every message on one road: it refuses an
// Origin that is not allowed (403), a missing or bad bearer token (401/503,
// as REST), an unknown toolset (400), a body that is not application/json
// (415) or larger than maxBodyBytes (413), each as a problem document; then
// it charges the POST (a tool call's two units, any other message's one; a
// refused tools/call becomes a tool error, any other refused message a 429
// problem), and serve answers the message under the caller's token session.
func (m *MCP) handle(w http.ResponseWriter, r *http.Request) {
	api.NoteMCP(r.Context(), "", "") // refusals below count as operation mcp too
	o, msg, err := m.admit(w, r)
	if err != nil {
		m.srv.WriteError(w, r, err)
		return
	}
	ctx := context.WithValue(r.Context(), outerKey{}, o)
	m.serve(w, r.WithContext(m.withSession(ctx, o)), msg)
}

// admit runs the guard's checks in order and returns the facts tool calls
// need, and the message read.
func (m *MCP) admit(w http.ResponseWriter, r *http.Request) (outerRequest, rpcMessage, error) {
	o := outerRequest{header: w.Header(), remoteAddr: r.RemoteAddr, host: r.Host}
	if err := m.checkOrigin(r); err != nil {
		return o, rpcMessage{}, err
	}
	cred, err := m.srv.Authenticator().Authenticate(r.Context(), api.AuthorizationHeader(r.Header),
		api.ClientAddr(r))
	if err != nil {
		return o, rpcMessage{}, err
	}
	o.cred = cred
	if o.toolsets, err = requestedToolsets(r); err != nil {
		return o, rpcMessage{}, err
	}
	if err := checkContentType(w, r); err != nil {
		return o, rpcMessage{}, err
	}
	body, err := bufferBody(r)
	if err != nil {
		return o, rpcMessage{}, err
	}
	msg := readMessage(body)
	o.method = msg.Method
	api.NoteMCP(r.Context(), msg.Method, msg.Params.Name)
	rate, err := m.srv.ChargeMCP(r.Context(), cred, o.method, w.Header().Set)
	if o.method == api.MCPToolCall {
		o.rate = &rate
	}
	if err != nil {
		if o.method != api.MCPToolCall {
			return o, rpcMessage{}, err
		}
		o.refused = err
		m.srv.ProblemFor(r, err).SetHeaders(w.Header().Set)
	}
	return o, msg, nil
}

// requestedToolsets reads ?toolsets= or the X-MCP-Toolsets header
// (comma-separated; the query wins; nil: neither, every toolset). A
// selection that names no toolset, unknown names, a query that does not
// parse and the parameter or the header given twice are each 400
// invalid_parameter with field toolsets, as REST refuses its parameters.
func requestedToolsets(r *http.Request) (map[string]bool, error) {
	raw, given, err := toolsetSelection(r)
	if err != nil || !given {
		return nil, err
	}
	out := map[string]bool{}
	var unknown []string
	for name := range strings.SplitSeq(raw, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case slices.Contains(api.Toolsets(), name):
			out[name] = true
		default:
			unknown = append(unknown, name)
		}
	}
	valid := "valid toolsets: " + strings.Join(api.Toolsets(), ", ")
	switch {
	case len(unknown) > 0:
		return nil, toolsetsProblem("unknown toolsets (" + strings.Join(unknown, ", ") + "); " + valid)
	case len(out) == 0:
		return nil, toolsetsProblem("toolsets names no toolset; leave it out for every toolset, or " +
			"name some, comma-separated; " + valid)
	}
	return out, nil
}

// toolsetSelection is the selection ?toolsets= gives, else the
// X-MCP-Toolsets header, and whether either is given.
func toolsetSelection(r *http.Request) (string, bool, error) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil { // url.Values would drop the pair silently
		return "", false, toolsetsProblem("the query string is not well percent-encoded (" + err.Error() +
			"); toolsets is read from it")
	}
	header := r.Header.Values(ToolsetsHeader)
	for _, given := range [...]struct {
		name   string
		values []string
	}{{"toolsets", query["toolsets"]}, {ToolsetsHeader, header}} {
		if len(given.values) > 1 {
			return "", false, toolsetsProblem(fmt.Sprintf("%s is given %d times; give it once, "+
				"its toolsets comma-separated", given.name, len(given.values)))
		}
	}
	if q, ok := query["toolsets"]; ok {
		return q[0], true, nil
	}
	if len(header) == 1 {
		return header[0], true, nil
	}
	return "", false, nil
}

// toolsetsProblem is the 400 invalid_parameter of a toolset selection.
func toolsetsProblem(detail string) error {
	return &resources.Error{Kind: resources.KindBadRequest, Code: api.CodeInvalidParameter,
		Field: "toolsets", Detail: detail}
}

// checkOrigin lets a request without Origin through, and one from a
// loopback origin (http://localhost, http://127.0.0.1, http://[::1], any
// port), as the MCP SDKs do; any other Origin must match an allowed origin
// exactly. Browsers send Origin on every POST, so this refuses DNS-rebinding
// and cross-site pages.
func (m *MCP) checkOrigin(r *http.Request) error {
	for _, o := range r.Header.Values("Origin") {
		if !loopbackOrigin(o) && !slices.Contains(m.cfg.AllowedOrigins, o) {
			return &resources.Error{Kind: resources.KindForbidden, Code: api.CodeOriginNotAllowed,
				Detail: "requests from origin " + o + " are not allowed on " + Path +
					"; an operator can allow it with --mcp-allowed-origins"}
		}
	}
	return nil
}

// loopbackOrigin reports whether origin is http(s)://localhost,
// 127.0.0.1 or [::1], with any port and nothing else.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// checkContentType requires a JSON-RPC body sent as application/json, and
// advertises it in Accept-Post when refusing.
func checkContentType(w http.ResponseWriter, r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/json" {
		return nil
	}
	w.Header().Set("Accept-Post", "application/json")
	return &api.Problem{Status: http.StatusUnsupportedMediaType, Code: api.CodeUnsupportedMediaType,
		Detail: "send the JSON-RPC message as application/json"}
}

// bufferBody reads the body (at most maxBodyBytes): an oversized one is
// refused before anything reads it.
func bufferBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	_ = r.Body.Close()
	if err != nil {
		return nil, api.BodyReadError(err) // 413 past the router's limit, 408 when too slow
	}
	if len(b) > maxBodyBytes {
		return nil, &api.Problem{Status: http.StatusRequestEntityTooLarge, Code: api.CodeBodyTooLarge,
			Detail: "the request body is larger than 1 MiB"}
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

package tools

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"slices"

	"platformapi/api"
	"platformapi/resources"
)

// maxBodyBytes bounds one POST /mcp body (a JSON-RPC message).
const maxBodyBytes = 1 << 20

// outerKey carries the outer request's facts into tool handlers.
type outerKey struct{}

// outerRequest is what an in-process tool call copies from POST /mcp.
type outerRequest struct {
	authorization string
	remoteAddr    string
	host          string
}

// outerFrom returns the facts of the POST /mcp request ctx belongs to.
func outerFrom(ctx context.Context) (outerRequest, bool) {
	o, ok := ctx.Value(outerKey{}).(outerRequest)
	return o, ok
}

// guard runs before mcp-go sees a POST /mcp: it refuses an Origin that is
// not allowed (403), a missing or bad bearer token (401/503, as REST), a
// body that is not application/json (415) or larger than maxBodyBytes
// (413), each as a problem document. The transport request itself costs no
// rate-limit units; each tool call is charged by its inner request.
func (m *MCP) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := m.checkOrigin(r); err != nil {
			m.srv.WriteError(w, r, err)
			return
		}
		addr := api.ClientAddr(r.RemoteAddr)
		if _, err := m.srv.Authenticator().Authenticate(r.Context(), r.Header.Get("Authorization"), addr); err != nil {
			m.srv.WriteError(w, r, err)
			return
		}
		if err := checkContentType(w, r); err != nil {
			m.srv.WriteError(w, r, err)
			return
		}
		if err := bufferBody(r); err != nil {
			m.srv.WriteError(w, r, err)
			return
		}
		ctx := context.WithValue(r.Context(), outerKey{}, outerRequest{
			authorization: r.Header.Get("Authorization"), remoteAddr: r.RemoteAddr, host: r.Host})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// checkOrigin lets a request without Origin through; one with Origin must
// match an allowed origin exactly. Browsers send Origin on every POST, so
// this also refuses DNS-rebinding and cross-site pages.
func (m *MCP) checkOrigin(r *http.Request) error {
	origins := r.Header.Values("Origin")
	for _, o := range origins {
		if !slices.Contains(m.cfg.AllowedOrigins, o) {
			return &resources.Error{Kind: resources.KindForbidden, Code: api.CodeOriginNotAllowed,
				Detail: "requests from origin " + o + " are not allowed on " + Path}
		}
	}
	return nil
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

// bufferBody reads the body (at most maxBodyBytes) so that an oversized one
// is refused before mcp-go, which reads bodies without a limit.
func bufferBody(r *http.Request) error {
	if r.Body == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	_ = r.Body.Close()
	if err != nil {
		return &api.Problem{Status: http.StatusBadRequest, Code: api.CodeMalformedBody,
			Detail: "the request body could not be read"}
	}
	if len(b) > maxBodyBytes {
		return &api.Problem{Status: http.StatusRequestEntityTooLarge, Code: api.CodeBodyTooLarge,
			Detail: "the request body is larger than 1 MiB"}
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

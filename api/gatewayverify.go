package api

import (
	"net/http"
	"strings"
	"time"

	"platformapi/resources"
)

// opGatewayVerify labels /ai-gateway/verify in the access log and metrics.
const opGatewayVerify = "ai-gateway-verify"

// registerGatewayVerify mounts /ai-gateway/verify on the root router for
// every method: outside /api/v1 and its switch (the network gate applies),
// no API token, no rate units, not an MCP tool, not in the OpenAPI document.
// Paths below it answer the same (Envoy's ext_authz appends the client's
// path to its path_prefix).
func (s *Server) registerGatewayVerify() {
	h := http.HandlerFunc(s.verifyGatewayKey)
	s.router.Handle(resources.GatewayVerifyPath, h)
	s.router.Handle(resources.GatewayVerifyPath+"/*", h)
}

// verifyGatewayKey answers the gateway's forward-authentication request
// from the view of live keys: 200 with the key's id, name and tier headers
// for a live key; 401 gateway_key_required, gateway_key_invalid or
// gateway_key_expired otherwise; 503 until the view has loaded. A live use
// is noted for the batched last_used_at, never written here.
func (s *Server) verifyGatewayKey(w http.ResponseWriter, r *http.Request) {
	noteOperation(r.Context(), opGatewayVerify)
	value, refused := gatewayCredential(r.Header)
	if refused != nil {
		s.WriteError(w, r, refused)
		return
	}
	e, err := s.gateway.lookup(value)
	now := s.cfg.Now()
	switch {
	case err != nil:
		s.WriteError(w, r, &Problem{Status: http.StatusServiceUnavailable,
			Code: resources.CodeUnavailable, Detail: "the gateway keys are not loaded yet; retry shortly",
			retryAfter: time.Second, cause: err})
		return
	case e == nil:
		s.WriteError(w, r, resources.Errorf(resources.KindUnauthorized, resources.CodeGatewayKeyInvalid,
			"the gateway key is malformed, unknown, revoked or was rotated away"))
		return
	case resources.GatewayKeyExpiredAt(e.expiresAt, now):
		s.WriteError(w, r, resources.Errorf(resources.KindUnauthorized, resources.CodeGatewayKeyExpired,
			"the gateway key has expired"))
		return
	}
	s.gateway.uses.note(e.id, now)
	h := w.Header()
	h[resources.GatewayKeyIDHeader], h[resources.GatewayKeyNameHeader] = e.header(valID), e.header(valName)
	if e.vals[valTier] != "" {
		h[resources.GatewayTierHeader] = e.header(valTier)
	}
	w.WriteHeader(http.StatusOK)
}

// gatewayCredential reads the gateway key of a verify request: its one
// Authorization header of the Bearer scheme. Sent twice it is refused, as
// the API and the node agent refuse it (one credential, RFC 9110), rather
// than opening the gateway on the first while the upstream may read another.
func gatewayCredential(h http.Header) (string, error) {
	if len(h["Authorization"]) > 1 {
		return "", resources.Errorf(resources.KindUnauthorized, resources.CodeGatewayKeyInvalid,
			"send one Authorization header with one gateway key")
	}
	value, ok := bearerCredential(h.Get("Authorization"))
	if !ok {
		return "", resources.Errorf(resources.KindUnauthorized, resources.CodeGatewayKeyRequired,
			"send the gateway key as Authorization: Bearer <gateway key>")
	}
	return value, nil
}

// bearerCredential reads the credential of an Authorization header of the
// Bearer scheme (any case), trimmed; ok is false when there is none.
func bearerCredential(header string) (string, bool) {
	scheme, value, ok := strings.Cut(strings.TrimSpace(header), " ")
	value = strings.TrimSpace(value)
	if !ok || !strings.EqualFold(scheme, "Bearer") || value == "" {
		return "", false
	}
	return value, true
}

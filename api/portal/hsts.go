package portal

import (
	"net/http"
	"strings"
)

// hstsValue is the Strict-Transport-Security of an HTTPS installation:
// one year, this host only (no includeSubDomains: the installation does
// not own its parent domain's other hosts; no preload: a list entry outlives
// the installation's own choice).
const hstsValue = "max-age=31536000"

// StrictTransport is next with Strict-Transport-Security on every answer
// when baseURL (--portal-url) says browsers reach the installation over
// HTTPS; otherwise next as it is (never over plain HTTP, never for an
// address guessed from a request). The portal and the API share the origin
// ({base_url}/api/v1 next to the portal), so one header covers both.
func StrictTransport(baseURL string, next http.Handler) http.Handler {
	if !strings.HasPrefix(strings.ToLower(baseURL), "https://") {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hstsValue)
		next.ServeHTTP(w, r)
	})
}

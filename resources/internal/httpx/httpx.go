// Package httpx builds the HTTP clients the outside-system adapters use.
package httpx

import (
	"net/http"
	"time"
)

// Client returns a copy of client (nil: a new one) that never follows a
// redirect — so credentials in headers are only ever sent to the configured
// host — and that has timeout when the client had none. The caller's client
// is never changed.
func Client(client *http.Client, timeout time.Duration) *http.Client {
	hc := &http.Client{}
	if client != nil {
		copied := *client
		hc = &copied
	}
	if hc.Timeout <= 0 {
		hc.Timeout = timeout
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return hc
}

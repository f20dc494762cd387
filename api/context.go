package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"log/slog"
	"net/http"
	"regexp"

	"platformapi/resources"
)

type ctxKey int

const (
	keyFacts ctxKey = iota
	keyCredential
	keyCall
	keyLease
	keyReplayForm
)

// RequestIDHeader carries the request id in and out.
const RequestIDHeader = "X-Request-ID"

// requestIDKey is RequestIDHeader in net/http's canonical form: a Header
// Get or Set with a name not in that form makes a canonical copy of it on
// every call (every request reads and writes this one).
const requestIDKey = "X-Request-Id"

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// RequestID returns the id of the request that ctx belongs to.
func RequestID(ctx context.Context) string {
	if f := factsOf(ctx); f != nil {
		return f.id
	}
	return ""
}

// withCall marks ctx as that of c's in-process GET (Server.Invoke): one
// context value that says which tool made it, that its adapter
// authenticated the caller (the guard does not again; the permission,
// destroy and rate checks still run), whether its POST /mcp paid both of
// the call's units, where charges record the budget, and the result budget.
func withCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, keyCall, c)
}

// callOf returns the in-process call ctx belongs to, or nil.
func callOf(ctx context.Context) *Call {
	c, _ := ctx.Value(keyCall).(*Call)
	return c
}

// MCPTool returns the MCP tool a request was made by, or "".
func MCPTool(ctx context.Context) string {
	if c := callOf(ctx); c != nil {
		return c.Operation
	}
	return ""
}

// authenticatedFrom returns the credential an in-process call's adapter
// checked, or nil.
func authenticatedFrom(ctx context.Context) *resources.Credential {
	if c := callOf(ctx); c != nil {
		return c.Credential
	}
	return nil
}

// guarded is what the guard admitted a request with: its caller and the
// token's rate budget after the request's charge.
type guarded struct {
	cred *resources.Credential
	rate RateStatus
}

// CredentialFrom returns the authenticated caller of the request.
func CredentialFrom(ctx context.Context) *resources.Credential {
	if g, _ := ctx.Value(keyCredential).(*guarded); g != nil {
		return g.cred
	}
	return nil
}

// rateFrom is the token's rate budget after the request's charge (for an
// MCP tool call, the charge of its POST).
func rateFrom(ctx context.Context) RateStatus {
	if g, _ := ctx.Value(keyCredential).(*guarded); g != nil {
		return g.rate
	}
	return RateStatus{}
}

// rateCell is where an in-process request's charges record the budget they
// leave (see Call.Rate), or nil.
func rateCell(ctx context.Context) *RateStatus {
	if c := callOf(ctx); c != nil {
		return c.Rate
	}
	return nil
}

// ActorFrom describes the authenticated caller for the audit log.
func ActorFrom(ctx context.Context) resources.Actor {
	a := resources.Actor{Label: "system", RequestID: RequestID(ctx)}
	c := CredentialFrom(ctx)
	if c == nil {
		return a
	}
	a.Label = c.Owner.Label()
	if c.Owner.Kind == resources.PrincipalUser {
		a.UserID = &c.Owner.ID
	}
	a.AuthKind = c.AuthKind()
	a.TokenID = formatID(c.Token.ID)
	if c.Address.IsValid() {
		a.SourceIP = c.Address.String()
	}
	return a
}

// loggerFrom returns the logger for ctx: fallback carrying the request id
// once, when ctx belongs to a request. It is made when a line is logged, not
// for every request (the access line adds the id itself).
func loggerFrom(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if id := RequestID(ctx); id != "" {
		return fallback.With("request_id", id)
	}
	return fallback
}

// NewRequestID is a made request id, as the server makes one for a request
// without a usable X-Request-ID: "req_" and 20 characters of the
// base32 alphabet (100 random bits), built in one allocation.
func NewRequestID() string {
	var raw [13]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read does not fail (it crashes the program instead)
	var b [4 + 24]byte       // 13 bytes are 21 base32 characters and 3 of padding
	copy(b[:], "req_")
	base32.StdEncoding.Encode(b[4:], raw[:])
	return string(b[:4+20])
}

// requestIDMiddleware keeps the caller's X-Request-ID when it is 1–64 of
// letters, digits, '.', '_', ':', '-', else makes one, in the request's facts
// (an in-process MCP call, which does not pass here, keeps the id of its
// POST /mcp: see observedFacts). The id is echoed on every response.
func requestIDMiddleware() func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f, r := ensureFacts(r)
			if f.id == "" {
				f.id = r.Header.Get(requestIDKey)
				if !requestIDPattern.MatchString(f.id) {
					f.id = NewRequestID()
				}
			}
			w.Header().Set(requestIDKey, f.id)
			next.ServeHTTP(w, r)
		})
	}
}

package api

import (
	"context"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"platformapi/resources"
)

// guard runs before every operation: authentication, rate limit, permission
// and destroy checks, in that order (none for a public operation). The
// credential is put in the context.
func (s *Server) guard(ctx huma.Context, next func(huma.Context)) {
	op, _ := opOf(ctx.Operation())
	if op.Public {
		next(ctx)
		return
	}
	cred := authenticatedFrom(ctx.Context())
	if cred != nil {
		noteToken(ctx.Context(), cred.Token.ID) // authenticated by the outer POST /mcp
	} else {
		var err error
		if cred, err = s.auth.Authenticate(ctx.Context(), ctx.Header("Authorization"), ClientAddr(ctx.RemoteAddr())); err != nil {
			s.writeHuma(ctx, err)
			return
		}
	}
	if cost := requestCost(ctx.Context()); cost > 0 {
		if p := s.charge(ctx.Context(), cred.Token.ID, cost, ctx.SetHeader); p != nil {
			s.writeHuma(ctx, p)
			return
		}
	}
	if err := permitted(cred, op.Permissions); err != nil {
		s.writeHuma(ctx, err)
		return
	}
	if op.Destroy && !cred.Token.AllowDestroy {
		s.writeHuma(ctx, resources.Errorf(resources.KindForbidden, resources.CodeDestroyNotAllowed,
			"this operation destroys; use a token created with Allow destroy"))
		return
	}
	next(huma.WithValue(ctx, keyCredential, cred))
}

// permitted is the permission rule: the credential's effective scopes hold
// any one of keys (none: any valid token), else 403 forbidden naming them.
func permitted(cred *resources.Credential, keys []string) error {
	if resources.HasAny(cred.EffectiveScopes(), keys) {
		return nil
	}
	return &resources.Error{Kind: resources.KindForbidden, Code: resources.CodeForbidden,
		Required: keys, Detail: "the token's effective scopes hold none of the required permission keys"}
}

// requestCost is what a request costs: a REST request 1 unit; the
// in-process GET of an MCP tool call nothing when its POST /mcp paid the
// call's two units, else the second unit.
func requestCost(ctx context.Context) int {
	c, ok := ctx.Value(keyMCPTool).(mcpCall)
	switch {
	case !ok:
		return restCallCost
	case c.paid:
		return 0
	}
	return mcpCallCost - mcpMessageCost
}

// ChargeMCP takes what a POST /mcp costs from the token's budget: the two
// units of a tool call when method is tools/call (its in-process GET then
// costs nothing more), else one unit; and sets the rate-limit headers (as
// REST sends them) through set. A refusal is the 429 rate_limited problem
// with its Retry-After, and takes nothing.
func (s *Server) ChargeMCP(ctx context.Context, cred *resources.Credential, method string,
	set func(name, value string)) error {
	cost := mcpMessageCost
	if method == MCPToolCall {
		cost = mcpCallCost
	}
	if p := s.charge(ctx, cred.Token.ID, cost, set); p != nil {
		return p
	}
	return nil
}

// charge takes cost units from the token's rate budget and sets the
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Policy headers.
func (s *Server) charge(ctx context.Context, tokenID int64, cost int, set func(name, value string)) *Problem {
	d, err := s.cfg.Limiter.Take(ctx, "token:"+strconv.FormatInt(tokenID, 10), cost)
	if err != nil {
		return &Problem{Status: http.StatusServiceUnavailable, Code: resources.CodeUnavailable,
			Detail: "the rate limiter is unavailable; retry shortly", retryAfter: 1e9, cause: err}
	}
	set("RateLimit-Limit", strconv.Itoa(d.Limit))
	set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	set("RateLimit-Policy", strconv.Itoa(d.Limit)+";w=60")
	if d.Allowed {
		return nil
	}
	s.metrics.refusals.Inc()
	return &Problem{Status: http.StatusTooManyRequests, Code: resources.CodeRateLimited, retryAfter: d.RetryAfter,
		retryZero: true, Detail: "the token's budget of " + strconv.Itoa(d.Limit) + " units (refilled at " +
			strconv.Itoa(d.Limit/60) + " a second) is spent; retry after Retry-After seconds"}
}

// contentType refuses a request body whose media type the operation does not
// document (Huma itself parses any JSON-like body): 415 with Accept headers.
func (s *Server) contentType(ctx huma.Context, next func(huma.Context)) {
	rb := ctx.Operation().RequestBody
	r, _ := humachi.Unwrap(ctx)
	if rb == nil || len(rb.Content) == 0 || r.ContentLength == 0 {
		next(ctx)
		return
	}
	ct := ctx.Header("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if _, ok := rb.Content[mt]; ok && err == nil {
		next(ctx)
		return
	}
	allowed := make([]string, 0, len(rb.Content))
	for k := range rb.Content {
		allowed = append(allowed, k)
	}
	slices.Sort(allowed)
	header := "Accept-Post"
	if ctx.Method() == http.MethodPatch {
		header = "Accept-Patch"
	}
	ctx.SetHeader(header, strings.Join(allowed, ", "))
	s.writeHuma(ctx, &Problem{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
		Detail: "send the body as one of: " + strings.Join(allowed, ", ")})
}

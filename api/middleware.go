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
// credential and the rate budget the charge left are put in the context.
func (s *Server) guard(ctx huma.Context, next func(huma.Context)) {
	op, _ := opOf(ctx.Operation())
	if op.Public {
		next(ctx)
		return
	}
	g, err := s.admit(ctx)
	if err == nil {
		err = permitted(g.cred, op.Permissions)
	}
	if err == nil && op.Destroy && !g.cred.Token.AllowDestroy {
		err = resources.Errorf(resources.KindForbidden, resources.CodeDestroyNotAllowed,
			"this operation destroys; use a token created with Allow destroy")
	}
	if err != nil {
		s.writeHuma(ctx, err)
		return
	}
	next(huma.WithValue(ctx, keyCredential, g))
}

// admit authenticates the request (unless the outer POST /mcp did) and
// charges what it costs: its caller and the budget left, or the refusal.
func (s *Server) admit(ctx huma.Context) (*guarded, error) {
	g := &guarded{cred: authenticatedFrom(ctx.Context())}
	if g.cred != nil {
		noteToken(ctx.Context(), g.cred.Token.ID) // authenticated by the outer POST /mcp
	} else {
		var err error
		addr := clientAddr(ctx.Context(), ctx.RemoteAddr())
		r, _ := humachi.Unwrap(ctx)
		g.cred, err = s.auth.Authenticate(ctx.Context(), AuthorizationHeader(r.Header), addr)
		if err != nil {
			return nil, err
		}
	}
	if cell := rateCell(ctx.Context()); cell != nil { // charged by the outer POST /mcp
		g.rate = *cell
	}
	if cost := requestCost(ctx.Context()); cost > 0 {
		rate, p := s.charge(ctx.Context(), g.cred.Token.ID, cost, ctx.SetHeader)
		if p != nil {
			return nil, p
		}
		g.rate = rate
	}
	return g, nil
}

// permitted is the permission rule: the credential's effective scopes hold
// any one of keys (none: any valid token), else 403 forbidden naming them
// with the remedy (forbiddenRemedy).
func permitted(cred *resources.Credential, keys []string) error {
	if cred.Holds(keys...) {
		return nil
	}
	return resources.Forbidden("the token's effective scopes", keys, forbiddenRemedy(cred, keys))
}

// forbiddenRemedy says what helps a token lacking keys: a token with one of
// them when its owner holds one; when the token carries one its owner no
// longer holds, a role for the owner; when the owner holds none, a role for
// the person or another service account, since a token never does more than
// its owner.
func forbiddenRemedy(cred *resources.Credential, keys []string) string {
	oneOf := resources.AnyOneOf(keys)
	owner := cred.Owner.Label()
	if carried := resources.Intersect(cred.Token.Scopes, keys); len(carried) > 0 {
		return "The token carries " + strings.Join(carried, ", ") + " but its owner (" + owner +
			") no longer holds it: ask an administrator to give the owner a role with " + oneOf + "."
	}
	if len(resources.Intersect(cred.Owner.Permissions, keys)) > 0 {
		return "Ask an administrator for a token with " + oneOf + "."
	}
	if cred.Owner.Kind != resources.PrincipalUser {
		return "The token's owner (service account " + cred.Owner.Name + ") holds none of these keys, and its " +
			"tokens carry no more than it holds: use a service account created with " + oneOf + "."
	}
	return "The token's owner (" + owner + ") holds none of these keys, so no token of theirs can carry one: " +
		"ask an administrator to give them a role with " + oneOf + ", then mint a token with it in the portal."
}

// requestCost is what a request costs: a REST request 1 unit; the
// in-process GET of an MCP tool call nothing when its POST /mcp paid the
// call's two units, else the second unit.
func requestCost(ctx context.Context) int {
	c := callOf(ctx)
	switch {
	case c == nil:
		return restCallCost
	case c.Paid:
		return 0
	}
	return mcpCallCost - mcpMessageCost
}

// ChargeMCP takes what a POST /mcp costs from the token's budget: the two
// units of a tool call when method is tools/call (its in-process GET then
// costs nothing more), else one unit; and sets the rate-limit headers (as
// REST sends them) through set. It returns the budget left (zero when the
// limiter could not be asked). A refusal is the 429 rate_limited problem
// with its Retry-After, and takes nothing.
func (s *Server) ChargeMCP(ctx context.Context, cred *resources.Credential, method string,
	set func(name, value string)) (RateStatus, error) {
	cost := mcpMessageCost
	if method == MCPToolCall {
		cost = mcpCallCost
	}
	rate, p := s.charge(ctx, cred.Token.ID, cost, set)
	if p != nil {
		return rate, p
	}
	return rate, nil
}

// The headers of a token's rate budget on an answer (RateLimit-Limit,
// RateLimit-Remaining, RateLimit-Policy; names are case-insensitive), in
// net/http's canonical form, which Header's Get and Set take as they are
// (any other spelling is copied into that form on every call).
const (
	HeaderRateLimit     = "Ratelimit-Limit"
	HeaderRateRemaining = "Ratelimit-Remaining"
	HeaderRatePolicy    = "Ratelimit-Policy"
)

// charge takes cost units from the token's rate budget, sets the
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Policy headers, and
// returns the budget left, also recorded in the context's rate cell (an
// in-process call whose adapter did not pay). Every figure of a budget an
// answer shows comes from here.
func (s *Server) charge(ctx context.Context, tokenID int64, cost int,
	set func(name, value string)) (RateStatus, *Problem) {
	d, err := s.cfg.Limiter.Take(ctx, "token:"+strconv.FormatInt(tokenID, 10), cost)
	if err != nil {
		return RateStatus{}, &Problem{Status: http.StatusServiceUnavailable,
			Code:   resources.CodeUnavailable,
			Detail: "the rate limiter is unavailable; retry shortly", retryAfter: 1e9, cause: err}
	}
	rate := d.Status()
	if cell := rateCell(ctx); cell != nil {
		*cell = rate
	}
	set(HeaderRateLimit, strconv.Itoa(d.Limit))
	set(HeaderRateRemaining, strconv.Itoa(d.Remaining))
	set(HeaderRatePolicy, strconv.Itoa(d.Limit)+";w=60")
	if d.Allowed {
		return rate, nil
	}
	s.metrics.refusals.Inc()
	return rate, &Problem{Status: http.StatusTooManyRequests, Code: resources.CodeRateLimited,
		retryAfter: d.RetryAfter, retryZero: true,
		Detail: "the token's budget of " + strconv.Itoa(d.Limit) + " units (refilled at " +
			strconv.Itoa(d.Limit/60) + " a second) is spent; " +
			"retry after " + resources.RetryAfterWords}
}

// lowerMediaType gives the request's Content-Type (ct, of media type mt)
// its type and subtype in lower case, parameters kept: they are
// case-insensitive (RFC 9110, 8.3.1), and Huma picks the body's decoder by
// the exact string, so `Application/JSON` (or `application/json ;
// charset=utf-8`) was a 415 after this check passed.
func lowerMediaType(r *http.Request, ct, mt string) {
	typ, params, hasParams := strings.Cut(ct, ";")
	if typ == mt || r == nil { // white space before ';' (RFC 9110 allows it) is rewritten too
		return
	}
	if hasParams {
		mt += "; " + strings.TrimSpace(params)
	}
	r.Header.Set("Content-Type", mt)
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
		lowerMediaType(r, ct, mt)
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

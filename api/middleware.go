package api

import (
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
// and destroy checks, in that order. The credential is put in the context.
func (s *Server) guard(ctx huma.Context, next func(huma.Context)) {
	op, _ := opOf(ctx.Operation())
	cred, err := s.auth.Authenticate(ctx.Context(), ctx.Header("Authorization"), ClientAddr(ctx.RemoteAddr()))
	if err != nil {
		s.writeHuma(ctx, err)
		return
	}
	if p := s.charge(ctx, cred.Token.ID); p != nil {
		s.writeHuma(ctx, p)
		return
	}
	if !resources.HasAny(cred.EffectiveScopes(), op.Permissions) {
		s.writeHuma(ctx, &resources.Error{Kind: resources.KindForbidden, Code: resources.CodeForbidden,
			Required: op.Permissions, Detail: "the token's effective scopes hold none of the required permission keys"})
		return
	}
	if op.Destroy && !cred.Token.AllowDestroy {
		s.writeHuma(ctx, resources.Errorf(resources.KindForbidden, resources.CodeDestroyNotAllowed,
			"this operation destroys; use a token created with Allow destroy"))
		return
	}
	next(huma.WithValue(ctx, keyCredential, cred))
}

// charge takes the request's cost from the token's rate budget.
func (s *Server) charge(ctx huma.Context, tokenID int64) *Problem {
	cost := restCallCost
	if MCPTool(ctx.Context()) != "" {
		cost = mcpCallCost
	}
	d, err := s.cfg.Limiter.Take(ctx.Context(), "token:"+strconv.FormatInt(tokenID, 10), cost)
	if err != nil {
		return &Problem{Status: http.StatusServiceUnavailable, Code: resources.CodeUnavailable,
			Detail: "the rate limiter is unavailable; retry shortly", retryAfter: 1e9, cause: err}
	}
	ctx.SetHeader("RateLimit-Limit", strconv.Itoa(d.Limit))
	ctx.SetHeader("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	if d.Allowed {
		return nil
	}
	return &Problem{Status: http.StatusTooManyRequests, Code: resources.CodeRateLimited, retryAfter: d.RetryAfter,
		retryZero: true, Detail: "the token used its " + strconv.Itoa(d.Limit) + " units for this minute; retry after Retry-After seconds"}
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

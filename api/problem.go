package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"

	"platformapi/resources"
)

// defaultRetryAfter is the Retry-After of a problem a retry can cure
// (its code is marked so in the catalogue) when what refused named no wait.
const defaultRetryAfter = time.Second

// msgValidationFailed is Huma's message for an invalid body (and ours); the
// problem's detail then names the first offending member and what is wrong.
const msgValidationFailed = "validation failed"

// ProblemTypePrefix starts the `type` of every problem document.
const ProblemTypePrefix = "urn:svc:api:problem:"

// Problem is the RFC 9457 problem document every error of the API is written
// as, over REST and inside MCP tool errors alike.
type Problem struct {
	Type      string              `json:"type" doc:"urn:svc:api:problem:<code>"`
	Title     string              `json:"title" doc:"HTTP reason phrase"`
	Status    int                 `json:"status" doc:"HTTP status"`
	Detail    string              `json:"detail" doc:"Text for people; may change"`
	Code      string              `json:"code" doc:"Stable machine code; branch on this"`
	Instance  string              `json:"instance" doc:"Request path"`
	RequestID string              `json:"request_id" doc:"Equals the X-Request-ID response header"`
	Field     string              `json:"field,omitempty" doc:"On 400/422: the first offending member or parameter"`
	Errors    []*huma.ErrorDetail `json:"errors,omitempty" doc:"On 400/422: every offending member or parameter"`
	Required  []string            `json:"required,omitempty" doc:"On 403 forbidden: permission keys of which any one would do"`
	Blockers  map[string]int      `json:"blockers,omitempty" doc:"On a 409 refusing a destroy: what blocks it"`
	State     string              `json:"state,omitempty" doc:"On 403 licence_*: the licence state"`
	Remedy    string              `json:"remedy,omitempty" doc:"On a 401 refusal of a presented token, 403 forbidden and licence_*: what to do"`
	// RetryAfterSeconds repeats Retry-After in the document, for clients
	// (MCP agents) that see the problem but not the HTTP headers.
	RetryAfterSeconds *int `json:"retry_after_seconds,omitempty" doc:"With a Retry-After header: the same number of seconds"`

	retryAfter time.Duration // sent as Retry-After when > 0 or retryZero
	retryZero  bool
	etag       string // sent as ETag: the current entity tag of a 412
	cause      error  // internal fault, logged, never written
}

// Error implements error.
func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

// GetStatus implements huma.StatusError.
func (p *Problem) GetStatus() int { return p.Status }

// ContentType implements huma.ContentTypeFilter: problems are problem+json.
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" || ct == "" {
		return "application/problem+json"
	}
	return ct
}

// Problem codes decided by this service beyond the contract's list.
const (
	codeMethodNotAllowed     = "method_not_allowed"
	CodeUnsupportedMediaType = "unsupported_media_type" // 415
	CodeInvalidParameter     = "invalid_parameter"      // 400: a path, query or header parameter
	CodeMalformedBody        = "malformed_body"         // 422: the body is not one JSON value
	CodeBodyTooLarge         = "body_too_large"         // 413
	codeInternal             = "internal"
	CodeOriginNotAllowed     = "origin_not_allowed" // 403 on /mcp
)

// kindStatus maps each domain error kind to its HTTP status: the one place
// where domain errors meet HTTP.
var kindStatus = map[resources.Kind]int{
	resources.KindInternal:           http.StatusInternalServerError,
	resources.KindBadRequest:         http.StatusBadRequest,
	resources.KindUnauthorized:       http.StatusUnauthorized,
	resources.KindForbidden:          http.StatusForbidden,
	resources.KindNotFound:           http.StatusNotFound,
	resources.KindConflict:           http.StatusConflict,
	resources.KindInvalid:            http.StatusUnprocessableEntity,
	resources.KindTooManyRequests:    http.StatusTooManyRequests,
	resources.KindUnavailable:        http.StatusServiceUnavailable,
	resources.KindPreconditionFailed: http.StatusPreconditionFailed,
}

// defaultCodes names the code of a status when nothing more specific is known.
var defaultCodes = map[int]string{
	400: CodeInvalidParameter, 401: resources.CodeNotAuthenticated, 403: resources.CodeForbidden,
	404: resources.CodeNotFound, 405: codeMethodNotAllowed, 408: codeRequestTimeout,
	409: resources.CodeConflict, 412: resources.CodePreconditionFailed, 413: CodeBodyTooLarge,
	415: CodeUnsupportedMediaType,
	422: resources.CodeValidationFailed, 429: resources.CodeRateLimited,
	500: codeInternal, 503: resources.CodeUnavailable,
}

// problemFromDomain converts a domain error into its problem document.
func problemFromDomain(e *resources.Error) *Problem {
	p := &Problem{
		Status: kindStatus[e.Kind], Code: e.Code, Detail: e.Detail, Field: e.Field,
		Required: e.Required, Blockers: e.Blockers, State: e.State, Remedy: e.Remedy,
	}
	if e.Kind == resources.KindInternal {
		p.cause = e
	}
	p.retryAfter, p.etag = e.RetryAfter, e.ETag
	return p
}

// newProblem builds the problem for a status, message and the errors Huma or
// a handler supplied. It replaces huma.NewError so every error is a Problem.
func newProblem(status int, msg string, errs ...error) *Problem {
	var details []*huma.ErrorDetail
	for _, err := range errs {
		if err == nil {
			continue
		}
		if p, ok := asProblem(err); ok {
			return p
		}
		if d, ok := err.(huma.ErrorDetailer); ok {
			d := d.ErrorDetail()
			// Never echo the offending value: it can be the whole body.
			details = append(details,
				&huma.ErrorDetail{Message: plainWords(d.Message), Location: d.Location})
			continue
		}
		return faultProblem(err)
	}
	p := &Problem{Status: status, Detail: msg}
	if status == 0 {
		p.Status = http.StatusInternalServerError
	}
	if len(details) > 0 {
		p.Errors = details
		p.Field = firstField(details)
		if paramsOnly(details) {
			p.Status, p.Code = http.StatusBadRequest, CodeInvalidParameter
			if p.Field == "cursor" { // a cursor the list did not issue (empty, too long)
				p.Code = resources.CodeInvalidCursor
			}
			p.Detail = p.Field + ": " + firstMessage(details, p.Field)
		} else if p.Status == http.StatusBadRequest { // Huma could not decode the body
			p.Status, p.Code = http.StatusUnprocessableEntity, CodeMalformedBody
		} else if p.Status == http.StatusUnprocessableEntity && msg == msgValidationFailed {
			p.Detail = p.Field + ": " + firstMessage(details, p.Field) // say what, not only that
		}
	}
	return p
}

// asProblem turns a *Problem or a *resources.Error into a problem.
func asProblem(err error) (*Problem, bool) {
	var p *Problem
	if errors.As(err, &p) {
		cp := *p
		return &cp, true
	}
	if e, ok := resources.AsError(err); ok {
		return problemFromDomain(e), true
	}
	return nil, false
}

// finish fills type, title, code, instance (path: the request path as
// sent, still percent-encoded, a URI reference) and request id, and hides any
// internal detail from the client.
func (p *Problem) finish(path, requestID string) {
	if p.Status >= 500 && p.Code == "" || p.Code == codeInternal {
		p.Code, p.Detail, p.Errors = codeInternal, "An internal error occurred; quote the request id to the operator.", nil
	}
	if p.Code == "" {
		p.Code = defaultCodes[p.Status]
		if p.Code == "" {
			p.Code = "error"
		}
	}
	if p.Detail == "" {
		p.Detail = http.StatusText(p.Status)
	}
	p.Type = ProblemTypePrefix + p.Code
	p.Title = http.StatusText(p.Status)
	if p.Instance == "" {
		p.Instance = path
	}
	if p.RequestID == "" {
		p.RequestID = requestID
	}
	if c, ok := resources.ProblemByCode(p.Code); ok && c.Retry && p.retryAfter <= 0 && !p.retryZero {
		p.retryAfter = defaultRetryAfter // the catalogue says a retry can cure it: say when
	}
	if secs, ok := p.retrySeconds(); ok {
		p.RetryAfterSeconds = &secs
	}
}

// retrySeconds is the Retry-After of the problem in whole seconds, rounded
// up, when a retry can cure it.
func (p *Problem) retrySeconds() (int, bool) {
	if p.retryAfter <= 0 && !p.retryZero {
		return 0, false
	}
	return int((p.retryAfter + time.Second - 1) / time.Second), true
}

// SetHeaders sets the problem's headers through set: WWW-Authenticate on
// 401, Retry-After where a retry can cure, ETag on a 412.
func (p *Problem) SetHeaders(set func(name, value string)) { p.headers(set) }

// headers sets WWW-Authenticate on 401, Retry-After where a retry can cure
// and ETag (the current entity tag) on a failed precondition.
func (p *Problem) headers(set func(name, value string)) {
	if p.etag != "" {
		set("ETag", p.etag)
	}
	if p.Status == http.StatusUnauthorized {
		v := `Bearer realm="platformapi"`
		if p.Code != resources.CodeNotAuthenticated && p.Code != resources.CodeGatewayKeyRequired { // a credential was sent
			v += `, error="invalid_token"`
		}
		set("WWW-Authenticate", v)
	}
	if secs, ok := p.retrySeconds(); ok {
		set("Retry-After", strconv.Itoa(secs))
	}
}

// log records an internal fault on the request's logger (which carries the
// request id); the client sees none of it. When the client hung up, the
// fault is its cancellation, not ours: a debug line only (the access log
// records status 499).
func (p *Problem) log(ctx context.Context, logger *slog.Logger) {
	if c, ok := resources.ProblemByCode(p.Code); !ok || c.Kind != resources.CodeKindProblem {
		// Every code answered must be in the catalogue agents read (GET /problems, MCP resource).
		logger.Warn("problem code missing from the problem-code catalogue", "code", p.Code)
	}
	if p.cause == nil && p.Status < 500 {
		return
	}
	if ClientGone(ctx) {
		logger.Debug("request cancelled by the client", "status", p.Status, "code", p.Code, "error", p.cause)
		return
	}
	logger.Error("request failed", "status", p.Status, "code", p.Code, "error", p.cause)
}

// timeMessage starts Huma's refusal of a time parameter, which ends in Go's
// layout string.
const timeMessage = "invalid date/time for format "

// plainWords is a validation message in words a client can act on: Huma's
// refusal of a time says what a time looks like, and that a + in an offset
// must be sent as %2B (a bare + in a query is a space).
func plainWords(msg string) string {
	if strings.HasPrefix(msg, timeMessage) {
		return "must be an RFC 3339 date and time such as 2026-11-27T10:00:00Z or " +
			"2026-11-27T12:00:00%2B02:00 (a + in a query string is sent as %2B)"
	}
	return msg
}

// firstField names the first offending member: Huma's location without its
// "body."/"query." prefix. Unknown-member errors come in map order, so the
// smallest wins for a stable answer.
func firstField(ds []*huma.ErrorDetail) string {
	if ds[0].Message != validation.MsgUnexpectedProperty {
		return fieldOf(ds[0])
	}
	var fields []string
	for _, d := range ds {
		if d.Message == validation.MsgUnexpectedProperty {
			fields = append(fields, fieldOf(d))
		}
	}
	sort.Strings(fields)
	return fields[0]
}

// firstMessage is the message of the first detail about field: the detail
// of a parameter problem, so an agent reading only the detail knows what to
// change (an enum's message lists the valid values).
func firstMessage(ds []*huma.ErrorDetail, field string) string {
	for _, d := range ds {
		if fieldOf(d) == field {
			return d.Message
		}
	}
	return ds[0].Message
}

func fieldOf(d *huma.ErrorDetail) string {
	loc := d.Location
	if rest, ok := strings.CutPrefix(d.Message, "expected required property "); ok {
		if name, ok := strings.CutSuffix(rest, " to be present"); ok {
			loc += "." + name
		}
	}
	if rest, ok := strings.CutPrefix(loc, "query."); ok { // status[1]: one value of a filter
		name, _, _ := strings.Cut(rest, "[")
		return name
	}
	if _, after, ok := strings.Cut(loc, "."); ok {
		return after
	}
	if loc == "body" {
		return ""
	}
	return loc
}

// paramsOnly reports whether every detail is about a path, query or header
// parameter rather than the body.
func paramsOnly(ds []*huma.ErrorDetail) bool {
	for _, d := range ds {
		if !strings.HasPrefix(d.Location, "query.") && !strings.HasPrefix(d.Location, "path.") &&
			!strings.HasPrefix(d.Location, "header.") {
			return false
		}
	}
	return true
}

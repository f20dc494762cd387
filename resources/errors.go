// Package resources holds the domain of platformapi: resource types, their
// field rules, the permission and problem-code catalogues, and the service
// interfaces that the storage layer implements. It knows nothing of HTTP or SQL.
package resources

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a domain error; the api package maps each kind to one HTTP
// status in a single table.
type Kind int

// The kinds of domain error.
const (
	KindInternal           Kind = iota // a fault of ours; never shown to a client
	KindBadRequest                     // 400: the request itself is malformed
	KindUnauthorized                   // 401: authentication failed
	KindForbidden                      // 403: authenticated, but not allowed
	KindNotFound                       // 404
	KindConflict                       // 409: the state of the resource refuses it
	KindInvalid                        // 422: the body breaks a field rule
	KindTooManyRequests                // 429: retry after RetryAfter
	KindUnavailable                    // 503: an operator must act, or retry later
	KindPreconditionFailed             // 412: a conditional request's condition does not hold
)

// Error is a domain error with a stable machine code. Every refusal the API
// can give is an *Error; anything else is an internal fault.
type Error struct {
	Kind     Kind
	Code     string         // stable machine code, e.g. "token_revoked"
	Detail   string         // words for people
	Field    string         // on KindInvalid: the first offending member
	Required []string       // on "forbidden": keys of which any one would do
	Blockers map[string]int // on a 409 that refuses a destroy
	State    string         // on a licence_* refusal: the licence state
	Remedy   string         // on a 401 token refusal, forbidden or licence_*: what to do, a sentence
	ETag     string         // on KindPreconditionFailed: the current entity tag, sent as ETag

	RetryAfter time.Duration // > 0: a retry after this long can succeed
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// Errorf builds an *Error of the given kind and code.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Invalid builds a 422-kind error that names the offending member.
func Invalid(field, code, format string, args ...any) *Error {
	e := Errorf(KindInvalid, code, format, args...)
	e.Field = field
	return e
}

// NotFound builds a not-found error with the resource's own code.
func NotFound(code, format string, args ...any) *Error {
	return Errorf(KindNotFound, code, format, args...)
}

// AsError returns the *Error inside err, if there is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Problem codes shared by every operation. Per-resource codes live beside
// their resource.
const (
	CodeNotFound              = "not_found"
	CodeValidationFailed      = "validation_failed"
	CodeInvalidCursor         = "invalid_cursor"
	CodeNotAuthenticated      = "not_authenticated"
	CodeTokenInvalid          = "token_invalid"
	CodeTokenExpired          = "token_expired"
	CodeTokenRevoked          = "token_revoked"
	CodePrincipalDisabled     = "principal_disabled"
	CodeTokenIPNotAllowed     = "token_ip_not_allowed"
	CodeForbidden             = "forbidden"
	CodeRoleNotGrantable      = "role_not_grantable" // 403: giving a role needs every key it carries
	CodeDestroyNotAllowed     = "destroy_not_allowed"
	CodeRateLimited           = "rate_limited"
	CodeUnavailable           = "unavailable"
	CodeAPITokensUnconfigured = "api_tokens_unconfigured"
	CodeConflict              = "conflict"
)

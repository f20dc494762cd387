package api

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
)

// Messages of the input checks (never echoing the value).
const (
	msgNUL           = "must not contain the NUL character"
	msgUTF8          = "must be valid UTF-8"
	msgPercent       = "has an invalid percent-encoding"
	msgSemicolon     = "is separated by ';'; separate parameters with '&'"
	msgMalformedBody = "the body is not valid JSON"
)

// inputGuard checks what Huma and the database would misread before an
// operation runs: every query and path parameter must be well
// percent-encoded UTF-8 without NUL (else 400 invalid_parameter naming it),
// and the body is read once (bounded by the router), must be JSON (else 422
// malformed_body) whose strings are UTF-8 without NUL and whose unique
// arrays hold no object or array where the schema wants a value (else 422
// validation_failed naming the member). The checked body is what the
// operation and the idempotency keeping read.
func (s *Server) inputGuard(ctx huma.Context, next func(huma.Context)) {
	if err := checkParams(ctx); err != nil {
		s.writeHuma(ctx, err)
		return
	}
	r, _ := humachi.Unwrap(ctx)
	if ctx.Operation().RequestBody == nil || r.Body == nil || r.Body == http.NoBody {
		next(ctx)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeHuma(ctx, BodyReadError(err))
		return
	}
	if err := s.checkBody(ctx.Operation(), body); err != nil {
		s.writeHuma(ctx, err)
		return
	}
	next(&bufferedContext{humaContext: ctx, body: body})
}

// checkParams refuses a query pair that url.ParseQuery would drop (bad
// percent-encoding, ';') and a query or path value with NUL or invalid UTF-8.
func checkParams(ctx huma.Context) error {
	var details []error
	for _, pair := range strings.Split(ctx.URL().RawQuery, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(rawKey)
		if kerr != nil || !cleanString(key) {
			key = rawKey
		}
		if msg := queryPairProblem(key, rawValue, kerr); msg != "" {
			details = append(details, &huma.ErrorDetail{Location: "query." + key, Message: msg})
		}
	}
	for _, p := range ctx.Operation().Parameters {
		if p.In != "path" {
			continue
		}
		if msg := stringProblem(ctx.Param(p.Name)); msg != "" {
			details = append(details, &huma.ErrorDetail{Location: "path." + p.Name, Message: msg})
		}
	}
	if len(details) == 0 {
		return nil
	}
	return newProblem(http.StatusBadRequest, "invalid parameters", details...)
}

// queryPairProblem says what is wrong with one query pair, or "".
func queryPairProblem(key, rawValue string, keyErr error) string {
	if strings.Contains(key, ";") || strings.Contains(rawValue, ";") {
		return msgSemicolon
	}
	value, err := url.QueryUnescape(rawValue)
	if keyErr != nil || err != nil {
		return msgPercent
	}
	if msg := stringProblem(key); msg != "" {
		return msg
	}
	return stringProblem(value)
}

// stringProblem says why a string cannot be stored as text, or "".
func stringProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return msgUTF8
	case strings.IndexByte(s, 0) >= 0:
		return msgNUL
	}
	return ""
}

func cleanString(s string) bool { return stringProblem(s) == "" }

// checkBody refuses a body that is not one JSON value (422 malformed_body),
// a string member that is not UTF-8 or holds NUL, and an object or array
// inside an array that must hold unique values (Huma's check of unique
// items cannot compare them): 422 validation_failed naming the member.
func (s *Server) checkBody(op *huma.Operation, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil // Huma answers a missing required body
	}
	if declared, _ := opOf(op); len(declared.BodyTypes) > 0 {
		return nil // a raw body (an image), not JSON: the operation checks it
	}
	if err := checkJSONStrings(body); err != nil {
		return err
	}
	schema := bodySchema(op)
	if schema == nil {
		return nil
	}
	return uniqueItemsOfValues(s.api.OpenAPI().Components.Schemas, schema, body)
}

func malformedBody() error {
	return &Problem{Status: http.StatusUnprocessableEntity, Code: CodeMalformedBody, Detail: msgMalformedBody}
}

// bodySchema is the JSON schema of an operation's body, or nil.
func bodySchema(op *huma.Operation) *huma.Schema {
	for _, mt := range op.RequestBody.Content {
		if mt.Schema != nil {
			return mt.Schema
		}
	}
	return nil
}

// bufferedContext hands an operation the body inputGuard read and checked.
type bufferedContext struct {
	humaContext
	body []byte
}

// BodyReader reads the checked body.
func (b *bufferedContext) BodyReader() io.Reader { return bytes.NewReader(b.body) }

// SetReadDeadline does nothing: the body was read already, and a deadline
// left on the connection would cut the server's idle read.
func (b *bufferedContext) SetReadDeadline(time.Time) error { return nil }

// Unwrap lets humachi.Unwrap reach the router's request and writer.
func (b *bufferedContext) Unwrap() huma.Context { return b.humaContext }

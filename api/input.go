package api

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"platformapi/resources"
)

// Messages of the input checks (never echoing the value).
const (
	msgNUL           = "must not contain the NUL character"
	msgUTF8          = "must be valid UTF-8"
	msgSurrogate     = "must be valid Unicode: a \\uD800-\\uDFFF escape must be one half of a surrogate pair"
	msgMemberTwice   = "is given twice; send each member once"
	msgPercent       = "has an invalid percent-encoding"
	msgSemicolon     = "is separated by ';'; separate parameters with '&'"
	msgMalformedBody = "the body is not valid JSON"
	msgNumberRange   = "is a number beyond the range this API takes (a 64-bit float)"
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
	op := ctx.Operation()
	if op.RequestBody == nil || (r.Body == nil || r.Body == http.NoBody) && !op.RequestBody.Required {
		next(ctx)
		return
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			s.writeHuma(ctx, BodyReadError(err))
			return
		}
	}
	if err := s.checkBody(op, body); err != nil {
		s.writeHuma(ctx, err)
		return
	}
	next(&bufferedContext{humaContext: ctx, body: body})
}

// maxQueryPairs bounds a query: url.ParseQuery stops at 10,000 pairs and
// what it drops would go unchecked (unknown names let through).
const maxQueryPairs = 1000

// checkParams refuses a query of more than maxQueryPairs pairs, a pair
// that url.ParseQuery would drop (bad percent-encoding, ';'), a query or
// path value with NUL or invalid UTF-8, a declared query parameter sent
// empty (an empty filter would read as no filter, an empty cursor as the
// first page) and a
// single-valued one sent more than once (only the first would count).
func checkParams(ctx huma.Context) error {
	pairs := strings.Split(ctx.URL().RawQuery, "&")
	if len(pairs) > maxQueryPairs {
		return &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter,
			Detail: fmt.Sprintf("the query has more than %d query parameters", maxQueryPairs)}
	}
	declared := queryParameters(ctx.Operation())
	var details []error
	seen := map[string]int{}
	for _, pair := range pairs {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(rawKey)
		if kerr != nil || !cleanString(key) {
			key = rawKey
		}
		msg := queryPairProblem(key, rawValue, kerr)
		if _, known := declared[key]; known && msg == "" && rawValue == "" {
			msg = "must not be empty; leave the parameter out"
		}
		if msg != "" {
			details = append(details, &huma.ErrorDetail{Location: "query." + key, Message: msg})
		}
		seen[key]++
	}
	details = append(details, repeatedParameters(declared, seen)...)
	return paramProblem(ctx, details)
}

// queryParameters are the operation's query parameters by name.
func queryParameters(op *huma.Operation) map[string]*huma.Param {
	out := map[string]*huma.Param{}
	for _, p := range op.Parameters {
		if p.In == "query" {
			out[p.Name] = p
		}
	}
	return out
}

// repeatedParameters refuses parameters sent more than once, but for an
// exploded array. A multi-value filter (an array, not exploded) takes its
// values comma-separated in one pair: Huma would read only the first pair.
func repeatedParameters(declared map[string]*huma.Param, seen map[string]int) []error {
	var out []error
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		p, known := declared[name]
		if !known || seen[name] < 2 {
			continue
		}
		array := p.Schema != nil && p.Schema.Type == "array"
		if array && p.Explode != nil && *p.Explode {
			continue
		}
		msg := fmt.Sprintf("is given %d times; give it once", seen[name])
		if array {
			msg += ", its values comma-separated"
		}
		out = append(out, &huma.ErrorDetail{Location: "query." + name, Message: msg})
	}
	return out
}

// paramProblem adds the path parameters' checks and answers 400 naming the
// first offending parameter, or nil.
func paramProblem(ctx huma.Context, details []error) error {
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
// then what checkJSONStrings and checkValues refuse: 422 validation_failed
// naming the member.
func (s *Server) checkBody(op *huma.Operation, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if op.RequestBody.Required {
			return &Problem{Status: http.StatusUnprocessableEntity, Code: CodeMalformedBody,
				Detail: "the request body is missing; the operation needs one"}
		}
		return nil
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
	return checkValues(s.api.OpenAPI().Components.Schemas, schema, body)
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

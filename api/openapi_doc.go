package api

import (
	"encoding/json"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/api/schemawalk"
)

// responseHeaders are the headers the shared middleware sends, declared once
// in components/headers and referenced from every response that carries them.
var responseHeaders = map[string]*huma.Header{
	RequestIDHeader: {Description: "The request's id: the caller's X-Request-ID when 1 to 64 letters, " +
		"digits, '.', '_', ':', '-', else a new one. Equals request_id of a problem and of the audit events.",
		Schema: &huma.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(64),
			Pattern: "^[A-Za-z0-9._:-]{1,64}$"}},
	"RateLimit-Limit": {Description: "Rate units a token has per minute " +
		"(a REST request costs 1, an MCP tool call 2).", Schema: countSchema(1e6)},
	"RateLimit-Remaining": {Description: "Rate units the token has left now; they refill evenly over a minute.",
		Schema: countSchema(1e6)},
	"RateLimit-Policy": {Description: "The token's rate policy: units per window, e.g. 600;w=60 " +
		"(draft-ietf-httpapi-ratelimit-headers).", Schema: &huma.Schema{Type: "string", MaxLength: ptr(100)}},
	"Retry-After": {Description: "Seconds after which a retry can succeed; sent only when a retry can cure " +
		"the answer (rate_limited, idempotency_request_in_progress, unavailable, a busy resource).",
		Schema: countSchema(86400)},
	ReplayedHeader: {Description: "true when this is the stored answer of an earlier request with the same " +
		"Idempotency-Key, replayed byte for byte.", Schema: &huma.Schema{Type: "string", Enum: []any{"true"}}},
	"WWW-Authenticate": {Description: `Bearer realm="platformapi", with error="invalid_token" when a token ` +
		`was sent.`, Schema: &huma.Schema{Type: "string", MaxLength: ptr(200)}},
	"Accept-Post": {Description: "The body media types the operation accepts (on 415 of POST and PUT).",
		Schema: &huma.Schema{Type: "string", MaxLength: ptr(200)}},
	"Accept-Patch": {Description: "The body media types the operation accepts (on 415 of PATCH).",
		Schema: &huma.Schema{Type: "string", MaxLength: ptr(200)}},
	"ETag": {Description: "The resource's current entity tag, as its read answers it (on 304, and on the 412 " +
		"of a conditional write).", Schema: &huma.Schema{Type: "string", MaxLength: ptr(200)}},
}

// documentConditional declares what an operation's conditional headers
// bring, from its parameters: with If-None-Match a 304 Not Modified (the
// ETag, no body); with If-Match, the current ETag on its 412.
func documentConditional(op *huma.Operation) {
	for _, p := range op.Parameters {
		var r *huma.Response
		switch {
		case p.In != "header":
			continue
		case strings.EqualFold(p.Name, "If-None-Match"):
			r = &huma.Response{Description: "Not Modified: If-None-Match names the current ETag (or is *); " +
				"no body, the client's copy is current."}
			op.Responses["304"] = r
		case strings.EqualFold(p.Name, "If-Match"):
			r = op.Responses["412"]
		}
		if r != nil {
			if r.Headers == nil {
				r.Headers = map[string]*huma.Param{}
			}
			r.Headers["ETag"] = &huma.Param{Ref: "#/components/headers/ETag"}
		}
	}
}

// declareResponseHeaders adds to each of op's responses the headers the
// shared middleware sends with it: X-Request-ID on all; the rate-limit headers
// on every 2xx, 3xx and 4xx except 401 (refused before the token is charged);
// WWW-Authenticate on 401; Retry-After on 409, 429, 503; Accept-Post or
// Accept-Patch on 415; Idempotent-Replayed on the stored answers of a keyed
// operation. Location comes from the operations' output structs.
func declareResponseHeaders(oapi *huma.OpenAPI, op *huma.Operation) {
	if oapi.Components.Headers == nil {
		oapi.Components.Headers = map[string]*huma.Header{}
	}
	for name, h := range responseHeaders {
		oapi.Components.Headers[name] = h
	}
	declared, _ := opOf(op)
	for status, r := range op.Responses {
		for _, name := range headersOf(status, op.Method, declared.Idempotent, declared.Public) {
			if r.Headers == nil {
				r.Headers = map[string]*huma.Param{}
			}
			r.Headers[name] = &huma.Param{Ref: "#/components/headers/" + name}
		}
	}
}

// countSchema is a non-negative integer header of at most limit.
func countSchema(limit float64) *huma.Schema {
	return &huma.Schema{Type: "integer", Format: "int32", Minimum: ptr(0.0), Maximum: &limit}
}

// headersOf names the shared headers an answer of status carries.
func headersOf(status, method string, idempotent, public bool) []string {
	names := []string{RequestIDHeader}
	class := status[:1]
	if (class == "2" || class == "3" || class == "4") && status != "401" && !public {
		names = append(names, "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Policy")
	}
	switch status {
	case "401":
		names = append(names, "WWW-Authenticate")
	case "409", "429", "503":
		names = append(names, "Retry-After")
	case "415":
		names = append(names, map[bool]string{true: "Accept-Patch", false: "Accept-Post"}[method == "PATCH"])
	}
	stored := class == "2" || status == "400" || status == "404" || status == "409" || status == "422"
	if idempotent && stored {
		names = append(names, ReplayedHeader)
	}
	return names
}

// describeDocument completes the document once every operation is
// registered: the licence, the audience of the server, no schema that
// nothing references, the limits patterns and enums imply (deriveLimits),
// each schema's patternDescription (a Huma keyword no OpenAPI tool knows)
// moved to x-pattern-description, and the request examples (addExamples).
// Validation messages were computed when the schemas were made, so they keep
// the description.
func describeDocument(oapi *huma.OpenAPI) {
	oapi.Info.License = &huma.License{Name: "Proprietary",
		URL: "https://example.invalid/licence"}
	for _, s := range oapi.Servers {
		if s.Extensions == nil {
			s.Extensions = map[string]any{}
		}
		s.Extensions["x-internal"] = true // served on the installation's own network only
	}
	pruneUnusedSchemas(oapi)
	addExamples(oapi)
	for _, fix := range []func(*huma.Schema){deriveLimits, movePatternDescription} {
		fixSchemas(oapi.Components.Schemas.Map(), fix)
	}
}

// fixSchemas applies fix to each of schemas and every schema inside them,
// once each: a schema met again (shared) is passed over with its subschemas.
func fixSchemas(schemas map[string]*huma.Schema, fix func(*huma.Schema)) {
	seen := map[*huma.Schema]bool{}
	for _, s := range schemas {
		_ = schemawalk.WalkHuma(s, func(node *huma.Schema) error {
			if seen[node] {
				return schemawalk.SkipChildren
			}
			seen[node] = true
			fix(node)
			return nil
		})
	}
}

// movePatternDescription moves patternDescription to x-pattern-description.
func movePatternDescription(s *huma.Schema) {
	if s.PatternDescription != "" {
		if s.Extensions == nil {
			s.Extensions = map[string]any{}
		}
		s.Extensions["x-pattern-description"] = strings.TrimSpace(s.PatternDescription)
		s.PatternDescription = ""
	}
}

// pruneUnusedSchemas drops component schemas nothing references: Nullable
// and Optional members inline their type's schema (a $ref cannot be made
// nullable), which leaves the registered component behind unused.
func pruneUnusedSchemas(oapi *huma.OpenAPI) {
	var doc map[string]any
	raw, err := json.Marshal(oapi)
	if err != nil || json.Unmarshal(raw, &doc) != nil {
		return // the document is marshalled again when served, and fails there
	}
	components, _ := doc["components"].(map[string]any)
	generic, _ := components["schemas"].(map[string]any)
	used, _ := schemawalk.Reachable(doc, generic)
	schemas := oapi.Components.Schemas.Map()
	for name := range schemas {
		if !used[name] {
			delete(schemas, name)
		}
	}
}

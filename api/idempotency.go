package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"platformapi/resources"
)

// IdempotencyKeyHeader names the key of a keyed request; replays carry
// ReplayedHeader: true.
const (
	IdempotencyKeyHeader = "Idempotency-Key"
	ReplayedHeader       = "Idempotent-Replayed"
)

var idempotencyKeyPattern = regexp.MustCompile(`^[!-~]{1,255}$`)

// replayedHeaders are the response headers kept with a stored answer.
var replayedHeaders = []string{"Content-Type", "Location", "Accept-Post", "Accept-Patch", "Retry-After"}

// LeaseFrom returns the idempotency lease of a keyed request, or nil. A
// handler passes it to the store so the recovery point is written in the
// business transaction.
func LeaseFrom(ctx context.Context) *resources.Lease {
	l, _ := ctx.Value(keyLease).(*resources.Lease)
	return l
}

// idempotency runs a keyed request of an Idempotent operation at most once
// per account and key: a finished one is replayed byte for byte, a running
// one is 429, a reused key is 409. Answers below 500 are stored; a 5xx
// releases the key for a retry from its recovery point.
func (s *Server) idempotency(ctx huma.Context, next func(huma.Context)) {
	op, _ := opOf(ctx.Operation())
	r, _ := humachi.Unwrap(ctx)
	values, sent := r.Header[http.CanonicalHeaderKey(IdempotencyKeyHeader)]
	if !op.Idempotent || !sent {
		next(ctx)
		return
	}
	key := strings.Join(values, ",")
	if !idempotencyKeyPattern.MatchString(key) {
		s.writeHuma(ctx, &resources.Error{Kind: resources.KindBadRequest, Code: resources.CodeInvalidIdempotencyKey,
			Field: IdempotencyKeyHeader, Detail: "Idempotency-Key must be 1 to 255 printable characters without spaces"})
		return
	}
	body, err := io.ReadAll(ctx.BodyReader())
	if err != nil {
		s.writeHuma(ctx, &Problem{Status: http.StatusBadRequest, Code: CodeMalformedBody, Detail: "the body could not be read"})
		return
	}
	cred := CredentialFrom(ctx.Context())
	begun, err := s.svc.Idempotency.Begin(ctx.Context(), resources.IdempotencyRequest{
		Account: cred.Owner.Kind + ":" + formatID(cred.Owner.ID), Key: key, Fingerprint: fingerprint(ctx, body)})
	switch {
	case err != nil:
		s.writeHuma(ctx, err)
	case begun.Replay != nil:
		replay(ctx, begun.Replay)
	default:
		s.runLeased(ctx, body, begun.Lease, next)
	}
}

// runLeased runs the handler with the lease, capturing its answer to store.
func (s *Server) runLeased(ctx huma.Context, body []byte, lease *resources.Lease, next func(huma.Context)) {
	rec := &recordingContext{humaContext: huma.WithValue(ctx, keyLease, lease), body: body}
	next(rec)
	status := rec.Status()
	detached := context.WithoutCancel(ctx.Context())
	var err error
	if status >= 500 || status == 0 {
		err = s.svc.Idempotency.Release(detached, lease)
	} else {
		_, w := humachi.Unwrap(ctx)
		err = s.svc.Idempotency.Finish(detached, lease, resources.StoredResponse{Status: status,
			Header: keptHeaders(w.Header()), Body: rec.out.Bytes()})
	}
	if err != nil {
		loggerFrom(ctx.Context(), s.cfg.Logger).Error("storing the idempotent answer failed", "error", err)
	}
}

// fingerprint hashes method, path, query and the body as canonical JSON (so
// member order and spacing do not matter).
func fingerprint(ctx huma.Context, body []byte) []byte {
	u := ctx.URL()
	h := sha256.New()
	io.WriteString(h, ctx.Method()+"\n"+u.Path+"\n"+u.Query().Encode()+"\n")
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) == nil {
		canonical, _ := json.Marshal(v) // map keys are sorted
		h.Write(canonical)
	} else {
		h.Write(body)
	}
	return h.Sum(nil)
}

func replay(ctx huma.Context, r *resources.StoredResponse) {
	for name, values := range r.Header {
		for _, v := range values {
			ctx.AppendHeader(name, v)
		}
	}
	ctx.SetHeader(ReplayedHeader, "true")
	ctx.SetStatus(r.Status)
	_, _ = ctx.BodyWriter().Write(r.Body)
}

func keptHeaders(h http.Header) map[string][]string {
	out := map[string][]string{}
	for _, name := range replayedHeaders {
		if v := h.Values(name); len(v) > 0 {
			out[name] = slices.Clone(v)
		}
	}
	return out
}

// humaContext lets recordingContext embed huma.Context, whose own method
// named Context would clash with the embedded field's default name.
type humaContext = huma.Context

// recordingContext gives the handler the buffered body and keeps a copy of
// what it writes.
type recordingContext struct {
	humaContext
	body   []byte
	out    bytes.Buffer
	status int
}

// BodyReader gives the handler the body the middleware already read.
func (r *recordingContext) BodyReader() io.Reader { return bytes.NewReader(r.body) }

// BodyWriter writes to the client and keeps a copy for the stored answer.
func (r *recordingContext) BodyWriter() io.Writer {
	return io.MultiWriter(r.humaContext.BodyWriter(), &r.out)
}

// SetStatus records the status and sends it.
func (r *recordingContext) SetStatus(code int) { r.status = code; r.humaContext.SetStatus(code) }

// Status is the status the handler answered with (0: none yet).
func (r *recordingContext) Status() int { return r.status }

// Unwrap lets humachi.Unwrap reach the router's request and writer.
func (r *recordingContext) Unwrap() huma.Context { return r.humaContext }

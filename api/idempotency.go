package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"time"

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

// validIdempotencyKey reports whether key is 1 to 255 printable ASCII
// characters without spaces.
func validIdempotencyKey(key string) bool { return idempotencyKeyPattern.MatchString(key) }

// replayedHeaders are the response headers kept with a stored answer.
var replayedHeaders = []string{"Content-Type", "Location", "Accept-Post", "Accept-Patch", "Retry-After"}

// LeaseFrom returns the idempotency lease of a keyed request, or nil. A
// handler passes it to the store so the recovery point is written in the
// business transaction.
func LeaseFrom(ctx context.Context) *resources.Lease {
	l, _ := ctx.Value(keyLease).(*resources.Lease)
	return l
}

// replayForm holds what a keyed request's answer is stored as, when the
// handler chose a form other than the answer it sent.
type replayForm struct {
	body any
}

// StoreForReplay makes body (encoded as JSON) the stored answer of a keyed
// request instead of the answer sent now; status and headers stay the
// sent ones. A handler whose first answer holds something that must never be
// kept or repeated (a secret value shown once) stores a form without it.
// Outside a keyed request it does nothing.
func StoreForReplay(ctx context.Context, body any) {
	if f, ok := ctx.Value(keyReplayForm).(*replayForm); ok {
		f.body = body
	}
}

// idempotency runs a keyed request of an Idempotent operation at most once
// per account and key, by the protocol written on resources.Idempotency:
// the request runs first and its change's transaction writes the key
// (runFirst); when it did not, the key is claimed and decides (replay, 409
// reused, 429 in progress, or the request runs again from the recovery
// point reached). Answers below 500 are stored; a 5xx releases the key.
func (s *Server) idempotency(ctx huma.Context, next func(huma.Context)) {
	op, _ := opOf(ctx.Operation())
	r, _ := humachi.Unwrap(ctx)
	values, sent := r.Header[http.CanonicalHeaderKey(IdempotencyKeyHeader)]
	if !op.Idempotent || !sent {
		next(ctx)
		return
	}
	if len(values) != 1 { // joined, "A,B" would be a key nobody sent
		s.writeHuma(ctx, &resources.Error{Kind: resources.KindBadRequest, Code: resources.CodeInvalidIdempotencyKey,
			Field: IdempotencyKeyHeader, Detail: "send Idempotency-Key once, with one key"})
		return
	}
	key := values[0]
	if !validIdempotencyKey(key) {
		s.writeHuma(ctx, &resources.Error{Kind: resources.KindBadRequest, Code: resources.CodeInvalidIdempotencyKey,
			Field: IdempotencyKeyHeader, Detail: "Idempotency-Key must be 1 to 255 printable characters without spaces"})
		return
	}
	body, err := io.ReadAll(boundedBody(ctx))
	if err != nil {
		s.writeHuma(ctx, BodyReadError(err))
		return
	}
	cred := CredentialFrom(ctx.Context())
	req := resources.IdempotencyRequest{Account: cred.Owner.Kind + ":" + formatID(cred.Owner.ID), Key: key,
		Fingerprint: fingerprint(ctx, body)}
	if s.runFirst(ctx, body, req, next) {
		return
	}
	begun, err := s.svc.Idempotency.Begin(ctx.Context(), req)
	switch {
	case err != nil:
		s.writeHuma(ctx, err)
	case begun.Replay != nil:
		s.metrics.replays.Inc()
		replay(ctx, begun.Replay)
	default:
		s.runLeased(ctx, body, begun.Lease, next)
	}
}

// boundedBody reads at most the operation's MaxBodyBytes: a longer body is
// cut there, and Huma's own read of that many bytes then answers 413, so a
// keyed request is never buffered beyond the limit.
func boundedBody(ctx huma.Context) io.Reader {
	if max := ctx.Operation().MaxBodyBytes; max > 0 {
		return io.LimitReader(ctx.BodyReader(), max)
	}
	return ctx.BodyReader()
}

// runLeased runs the handler with the lease, capturing its answer to store.
func (s *Server) runLeased(ctx huma.Context, body []byte, lease *resources.Lease, next func(huma.Context)) {
	form := &replayForm{}
	rec := newKeyedContext(ctx, lease, form, body, false)
	defer func() {
		if v := recover(); v != nil { // a panic is a 5xx: free the key, then let the recoverer answer
			s.endLease(ctx, lease, 0, nil)
			panic(v)
		}
	}()
	next(rec)
	stored, ok := s.formToStore(ctx, rec.out.Bytes(), form)
	if !ok {
		s.endLease(ctx, lease, 0, nil)
		return
	}
	s.endLease(ctx, lease, rec.Status(), stored)
}

// formToStore is what a keyed request's answer is stored as: the bytes
// sent, or the form the handler gave for replays (a secret left out);
// false when that form cannot be encoded (logged).
func (s *Server) formToStore(ctx huma.Context, sent []byte, form *replayForm) ([]byte, bool) {
	if form.body == nil {
		return sent, true
	}
	var buf bytes.Buffer
	if err := JSONFormat.Marshal(&buf, form.body); err != nil {
		loggerFrom(ctx.Context(), s.cfg.Logger).Error("encoding the answer to store failed", "error", err)
		return nil, false
	}
	return buf.Bytes(), true
}

// endLease stores an answer below 500 for replay, or releases the key after
// a 5xx (or no answer) so a retry runs again from its recovery point. An
// answer the store already kept in the business transaction (see
// keepAnswerInTx) is not stored again.
func (s *Server) endLease(ctx huma.Context, lease *resources.Lease, status int, body []byte) {
	detached := context.WithoutCancel(ctx.Context())
	log := loggerFrom(ctx.Context(), s.cfg.Logger)
	if status >= 500 || status == 0 {
		if err := s.svc.Idempotency.Release(detached, lease); err != nil {
			// The request's own failure was logged as the error; the key
			// frees itself when its lease ends.
			log.Warn("releasing the Idempotency-Key failed; a retry may take it over once its lease ends",
				"lease", resources.IdempotencyLeaseTTL.String(), "error", err)
		}
		return
	}
	_, w := humachi.Unwrap(ctx)
	answer := resources.StoredResponse{Status: status, Header: keptHeaders(w.Header()), Body: body}
	if lease.Stored != nil && sameAnswer(*lease.Stored, answer) {
		return
	}
	if err := s.svc.Idempotency.Finish(detached, lease, answer); err != nil {
		log.Error("storing the idempotent answer failed", "error", err)
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
	_, _ = ctx.BodyWriter().Write(replayedBody(ctx, r))
}

// replayedBody is the stored body, but a problem's request_id names this
// request (contract: request_id equals the X-Request-ID response header);
// every other byte is as stored.
func replayedBody(ctx huma.Context, r *resources.StoredResponse) []byte {
	if r.Status < 400 {
		return r.Body
	}
	var p struct {
		RequestID string `json:"request_id"`
	}
	now := RequestID(ctx.Context())
	if json.Unmarshal(r.Body, &p) != nil || p.RequestID == "" || p.RequestID == now {
		return r.Body
	}
	// Request ids are letters, digits and ".:_-": quoted as they are.
	return bytes.Replace(r.Body, []byte(`"request_id":"`+p.RequestID+`"`),
		[]byte(`"request_id":"`+now+`"`), 1)
}

// sameAnswer reports whether a and b are the same status, kept headers and
// body bytes.
func sameAnswer(a, b resources.StoredResponse) bool {
	return a.Status == b.Status && bytes.Equal(a.Body, b.Body) &&
		maps.EqualFunc(a.Header, b.Header, slices.Equal[[]string])
}

// keepAnswerInTx lets the store keep a keyed request's answer in its
// business transaction, beside the recovery point, instead of storing it
// after the request (one round trip and one commit less). answer builds
// from the committed result what the handler then answers: the Location
// ("" for none) and the body, sent as JSON with status. When the answer
// actually sent differs (another media type was negotiated, the handler
// changed it), the middleware stores the sent one as before. Outside a
// keyed request it does nothing.
func keepAnswerInTx[R any](ctx context.Context, status int, answer func(R) (location string, body any)) {
	l := LeaseFrom(ctx)
	if l == nil {
		return
	}
	l.Answer = func(result any) (resources.StoredResponse, bool) {
		r, ok := result.(R)
		if !ok {
			return resources.StoredResponse{}, false
		}
		location, body := answer(r)
		var buf bytes.Buffer
		if err := JSONFormat.Marshal(&buf, body); err != nil {
			return resources.StoredResponse{}, false
		}
		h := map[string][]string{"Content-Type": {"application/json"}}
		if location != "" {
			h["Location"] = []string{location}
		}
		return resources.StoredResponse{Status: status, Header: h, Body: buf.Bytes()}, true
	}
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

// humaContext lets keyedContext embed huma.Context, whose own method
// named Context would clash with the embedded field's default name.
type humaContext = huma.Context

// keyedContext gives a keyed request's handler the body the middleware
// already read, with the lease and the replay form in its context, and
// captures the answer: held back (hold: status and body; headers go to the
// response) until the middleware knows whether the key was written, or
// sent as it comes with a copy kept for storing.
type keyedContext struct {
	humaContext
	hold   bool
	body   []byte
	out    bytes.Buffer
	status int
}

// newKeyedContext is ctx for a keyed request's handler.
func newKeyedContext(ctx huma.Context, lease *resources.Lease, form *replayForm, body []byte,
	hold bool) *keyedContext {
	keyed := huma.WithValue(huma.WithValue(ctx, keyLease, lease), keyReplayForm, form)
	return &keyedContext{humaContext: keyed, hold: hold, body: body}
}

// BodyReader gives the handler the body the middleware already read.
func (k *keyedContext) BodyReader() io.Reader { return bytes.NewReader(k.body) }

// BodyWriter keeps what the handler writes, and sends it too unless held.
func (k *keyedContext) BodyWriter() io.Writer {
	if !k.hold {
		return io.MultiWriter(k.humaContext.BodyWriter(), &k.out)
	}
	if k.status == 0 {
		k.status = http.StatusOK
	}
	return &k.out
}

// SetStatus records the status (held: the first one counts, as net/http's)
// and sends it unless held.
func (k *keyedContext) SetStatus(code int) {
	switch {
	case !k.hold:
		k.status = code
		k.humaContext.SetStatus(code)
	case k.status == 0:
		k.status = code
	}
}

// Status is the status the handler answered with (0: none yet).
func (k *keyedContext) Status() int { return k.status }

// SetReadDeadline does nothing: the body was read already.
func (k *keyedContext) SetReadDeadline(time.Time) error { return nil }

// Unwrap lets humachi.Unwrap reach the router's request and writer.
func (k *keyedContext) Unwrap() huma.Context { return k.humaContext }

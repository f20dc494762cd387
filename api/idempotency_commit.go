package api

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"platformapi/resources"
)

// runKeyAtCommit runs a keyed request of a KeyAtCommit operation with its
// key unclaimed: the business transaction writes the key (recovery point
// and answer) as its last write, or rolls back when the key is there
// already. The answer is held back until then. It reports false when the
// key was not written (taken by another request, a conflict, a fault):
// nothing of that run was sent or kept, and the caller runs the request
// again on the claim-first path, which replays, refuses or resumes as
// usual. A rolled-back run changed nothing, so running again is safe.
func (s *Server) runKeyAtCommit(ctx huma.Context, body []byte, req resources.IdempotencyRequest,
	next func(huma.Context)) bool {
	_, w := humachi.Unwrap(ctx)
	headers := w.Header().Clone()
	lease := &resources.Lease{Token: rand.Text(), RecoveryPoint: resources.RecoveryStarted, AtCommit: &req}
	form := &replayForm{}
	held := &heldAnswer{humaContext: huma.WithValue(huma.WithValue(ctx, keyLease, lease), keyReplayForm, form),
		body: body}
	next(held)
	if lease.ID == 0 || held.status >= 500 || held.status == 0 { // not written, or perhaps not committed
		clear(w.Header())
		for k, v := range headers {
			w.Header()[k] = v
		}
		return false
	}
	stored, ok := s.formToStore(ctx, held.out.Bytes(), form)
	if ok {
		s.endLease(ctx, lease, held.status, stored)
	}
	ctx.SetStatus(held.status)
	_, _ = ctx.BodyWriter().Write(held.out.Bytes())
	return true
}

// heldAnswer gives the handler the buffered body and holds its answer
// (status and body; headers go to the response) until the middleware
// knows whether the key was written.
type heldAnswer struct {
	humaContext
	body   []byte
	out    bytes.Buffer
	status int
}

// BodyReader gives the handler the body the middleware already read.
func (h *heldAnswer) BodyReader() io.Reader { return bytes.NewReader(h.body) }

// BodyWriter keeps what the handler writes.
func (h *heldAnswer) BodyWriter() io.Writer {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return &h.out
}

// SetStatus records the status (the first one counts, as net/http's).
func (h *heldAnswer) SetStatus(code int) {
	if h.status == 0 {
		h.status = code
	}
}

// Status is the status the handler answered with (0: none yet).
func (h *heldAnswer) Status() int { return h.status }

// SetReadDeadline does nothing: the body was read already.
func (h *heldAnswer) SetReadDeadline(time.Time) error { return nil }

// Unwrap lets humachi.Unwrap reach the router's request and writer.
func (h *heldAnswer) Unwrap() huma.Context { return h.humaContext }

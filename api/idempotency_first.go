package api

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"io"
	"maps"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"platformapi/resources"
)

// runFirst runs a keyed request with its key not yet written: the change's
// transaction writes it (lease, recovery point, perhaps the answer) as its
// last write, or rolls back with idempotency_request_in_progress when the
// key is there already. The answer is held back until then. It reports
// false when the key was not written and the answer is below 500 (the key
// was taken, or the request was refused before any change): nothing of the
// run was sent or kept, and the caller claims the key and decides. A 5xx is
// sent; when the key was written (the commit may not have happened), the
// key is freed first.
func (s *Server) runFirst(ctx huma.Context, body []byte, req resources.IdempotencyRequest,
	next func(huma.Context)) bool {
	_, w := humachi.Unwrap(ctx)
	headers := w.Header().Clone()
	lease := &resources.Lease{Token: rand.Text(), RecoveryPoint: resources.RecoveryStarted,
		Request: &req}
	form := &replayForm{}
	keyed := huma.WithValue(huma.WithValue(ctx, keyLease, lease), keyReplayForm, form)
	held := &heldAnswer{humaContext: keyed, body: body}
	s.runHeld(ctx, lease, held, next)
	failed := held.status >= 500 || held.status == 0
	switch {
	case lease.ID == 0 && held.status < 300 && held.status != 0:
		loggerFrom(ctx.Context(), s.cfg.Logger).Error("a keyed change did not write its "+
			"Idempotency-Key; its answer is sent but not kept",
			"operation", ctx.Operation().OperationID)
	case lease.ID == 0 && held.status < 500:
		clear(w.Header())
		maps.Copy(w.Header(), headers)
		return false
	case lease.ID != 0 && failed:
		s.endLease(ctx, lease, 0, nil)
	case lease.ID != 0:
		if stored, ok := s.formToStore(ctx, held.out.Bytes(), form); ok {
			s.endLease(ctx, lease, held.status, stored)
		}
	}
	ctx.SetStatus(cmp.Or(held.status, http.StatusOK))
	_, _ = ctx.BodyWriter().Write(held.out.Bytes())
	return true
}

// runHeld runs the handler into held; a panic frees the key when the run
// wrote it, then goes on to the recoverer (a 500).
func (s *Server) runHeld(ctx huma.Context, lease *resources.Lease, held *heldAnswer,
	next func(huma.Context)) {
	defer func() {
		if v := recover(); v != nil {
			if lease.ID != 0 {
				s.endLease(ctx, lease, 0, nil)
			}
			panic(v)
		}
	}()
	next(held)
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

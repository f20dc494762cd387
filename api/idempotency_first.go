package api

import (
	"cmp"
	"crypto/rand"
	"maps"
	"net/http"

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
	held := newKeyedContext(ctx, lease, form, body, true)
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
func (s *Server) runHeld(ctx huma.Context, lease *resources.Lease, held *keyedContext,
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

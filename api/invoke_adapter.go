package api

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
)

// opAdapter is Huma's chi adapter that also keeps each GET operation's
// handler (Huma's middleware and the operation itself), so that Invoke can
// run an operation in-process by name: the one narrow seam the MCP tools
// use, with no request line to route and no router state to reset.
type opAdapter struct {
	huma.Adapter
	s *Server
}

// newOpAdapter adapts the chi router r for s.
func newOpAdapter(s *Server, r chi.Router) *opAdapter {
	return &opAdapter{Adapter: humachi.NewAdapter(r), s: s}
}

// Handle registers op on the router and keeps a GET's in-process handler
// (inProcessChain around the operation).
func (a *opAdapter) Handle(op *huma.Operation, handler func(huma.Context)) {
	a.Adapter.Handle(op, handler)
	if op.Method != http.MethodGet {
		return
	}
	run := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler(humachi.NewContext(op, r, w))
	})
	if a.s.invokers == nil {
		a.s.invokers = map[string]http.Handler{}
	}
	a.s.invokers[op.OperationID] = a.s.inProcessChain(run)
}

// inProcessChain is what the root chain does for an in-process call whose
// outer request went through it already: the call's own access record and
// metrics (observe), its span when tracing is on, and recovery (a panic
// answers 500 as on the router).
func (s *Server) inProcessChain(run http.Handler) http.Handler {
	h := s.recoverer(run)
	if s.cfg.Tracing != nil {
		h = s.traced(h)
	}
	return s.observe(h)
}

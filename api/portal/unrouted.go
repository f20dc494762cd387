package portal

import (
	"net/http"
	"strings"
)

// routed serves r through mux when one of its routes takes the request,
// else answers the portal's own page: 404 for an address the portal does
// not serve, 405 with Allow for one that takes other methods (net/http's
// ServeMux would answer both in plain text).
func (h *Handler) routed(mux *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		allow := allowedMethods(mux, r)
		if len(allow) == 0 {
			h.refuse(w, r, http.StatusNotFound, "There is no such page in the portal. "+
				"Start again from the portal's Profile page.")
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		h.refuse(w, r, http.StatusMethodNotAllowed, wrongMethod(r, allow))
	}
}

// allowedMethods lists the methods mux serves r's path with, in the order
// an Allow header names them (HEAD with GET, as ServeMux serves it).
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// wrongMethod says why a page that exists cannot be opened as r asks.
func wrongMethod(r *http.Request, allow []string) string {
	switch {
	case r.URL.Path == Path+"logout":
		return "Signing out takes the Sign out button on the portal's Profile page; " +
			"this address cannot be opened as a page."
	case len(allow) == 1 && allow[0] == http.MethodPost:
		return "This address takes a button of one of the portal's pages; " +
			"it cannot be opened as a page."
	}
	return "This page cannot be opened with " + r.Method + ". It takes " +
		strings.Join(allow, ", ") + "."
}

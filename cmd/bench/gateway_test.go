package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// TestBare200Handler_HeadersAreVerifysAnswer holds the bound's reference
// to verify's 200: the four headers a live key's answer carries, a new
// request id each time in the server's form; without -headers, none.
func TestBare200Handler_HeadersAreVerifysAnswer(t *testing.T) {
	answer := func(h http.Handler) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, resources.GatewayVerifyPath, nil))
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Fatalf("status %d, body %q: want 200, empty", rec.Code, rec.Body)
		}
		return rec
	}
	if h := answer(bare200Handler(false)).Header(); len(h) != 0 {
		t.Errorf("bare 200 wrote headers %v", h)
	}
	first, second := answer(bare200Handler(true)).Header(), answer(bare200Handler(true)).Header()
	var names []string
	for name := range first {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"X-Gateway-Key-Id", "X-Gateway-Key-Name", "X-Gateway-Tier", "X-Request-Id"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("header names (-want +got):\n%s", diff)
	}
	form := regexp.MustCompile(`^req_[A-Z2-7]{20}$`)
	id1, id2 := first.Get("X-Request-Id"), second.Get("X-Request-Id")
	if !form.MatchString(id1) || !form.MatchString(id2) || id1 == id2 {
		t.Errorf("request ids %q, %q: want two distinct ids of the server's form", id1, id2)
	}
}

package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets of the parsers that take client input (cursor, Idempotency-Key,
// X-Request-ID, the body checker). Seeds run in every `go test`.

func FuzzCursorDecode(f *testing.F) {
	c := NewCursors([]byte("fuzz-key"))
	f.Add("customers", "x", *c.Encode("customers", map[string]string{"status": "active"}, []string{"12"}))
	f.Add("customers", "", "")
	f.Add("audit", "a", "AAAA")
	f.Add("customers", "z", "eyJsIjoiY3VzdG9tZXJzIn0")
	f.Fuzz(func(t *testing.T, list, filter, cursor string) {
		after, err := c.Decode(list, map[string]string{"f": filter}, cursor)
		if err != nil {
			if p, ok := asProblem(err); !ok || p.Status != http.StatusBadRequest || p.Code != "invalid_cursor" {
				t.Fatalf("error %v is not 400 invalid_cursor", err)
			}
			return
		}
		if cursor != "" && len(after) == 0 {
			t.Fatal("a cursor decoded to no position")
		}
		if cursor != "" && *c.Encode(list, map[string]string{"f": filter}, after) != cursor {
			t.Fatal("an accepted cursor is not the one this server issues for its position")
		}
		if !utf8.ValidString(filter) || !utf8.ValidString(list) {
			return // list names, filters and positions the server writes are UTF-8
		}
		enc := c.Encode(list, map[string]string{"f": filter}, []string{filter})
		if got, err := c.Decode(list, map[string]string{"f": filter}, *enc); err != nil || len(got) != 1 || got[0] != filter {
			t.Fatalf("round trip of %q: %v %v", filter, got, err)
		}
	})
}

func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{"k-1", "", " ", "has space", strings.Repeat("~", 255), strings.Repeat("a", 256), "tab\t", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		ok := validIdempotencyKey(key)
		want := len(key) >= 1 && len(key) <= 255 && !strings.ContainsFunc(key, func(r rune) bool { return r < '!' || r > '~' })
		if ok != want {
			t.Fatalf("%q: valid %v, want %v", key, ok, want)
		}
	})
}

func FuzzRequestID(f *testing.F) {
	for _, s := range []string{"abc.DEF_1:2-3", "", "has space", strings.Repeat("a", 65), "semi;colon", "ü", "\x00"} {
		f.Add(s)
	}
	h := requestIDMiddleware()(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	f.Fuzz(func(t *testing.T, id string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(RequestIDHeader, id)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got := w.Header().Get(RequestIDHeader)
		if !requestIDPattern.MatchString(got) {
			t.Fatalf("answered request id %q", got)
		}
		if requestIDPattern.MatchString(id) != (got == id) {
			t.Fatalf("sent %q, answered %q", id, got)
		}
	})
}

func FuzzCheckJSONStrings(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"a":["x",{"b":"\u0000"}]}`, "{\"a\":\"\xff\"}", `[1,2`, `{"a":1}{}`, `"x"`,
		`{"k\u0000":1}`, `{"a":{"b":[[],{}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		err := checkJSONStrings([]byte(body))
		if err == nil {
			if !utf8.ValidString(body) {
				t.Fatalf("accepted invalid UTF-8: %q", body)
			}
			return
		}
		p, ok := asProblem(err)
		if !ok || p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("error %v is not a 422 problem", err)
		}
	})
}

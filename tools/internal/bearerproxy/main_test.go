package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestProxy_AddsBearerKeepsHostAndOrigin(t *testing.T) {
	var got *http.Request
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		_, _ = io.WriteString(w, "ok")
	}))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	front := httptest.NewServer(proxy(u, "svc_pat_x"))
	defer front.Close()
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp?toolsets=ai", nil)
	req.Host = "evil.example.com"
	req.Header.Set("Origin", "http://evil.example.com")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if got.Header.Get("Authorization") != "Bearer svc_pat_x" || got.Host != "evil.example.com" ||
		got.Header.Get("Origin") != "http://evil.example.com" || got.URL.RawQuery != "toolsets=ai" {
		t.Fatalf("forwarded %v %s %v", got.Header, got.Host, got.URL)
	}
}

func TestProxy_PassesLargeAndStreamedAnswersWhole(t *testing.T) {
	large := strings.Repeat(`{"name":"tool"},`, 8000) // 128 KB, written in pieces: chunked
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "data: two\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for i := 0; i < len(large); i += 1000 {
			_, _ = io.WriteString(w, large[i:min(i+1000, len(large))])
			w.(http.Flusher).Flush()
		}
	}))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	front := httptest.NewServer(proxy(u, "svc_pat_x"))
	defer front.Close()
	for path, want := range map[string]string{"/mcp": large, "/sse": "data: one\n\ndata: two\n\n"} {
		res, err := http.Post(front.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil || string(got) != want || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d, %d bytes of %d, %v", path, res.StatusCode, len(got), len(want), err)
		}
	}
}

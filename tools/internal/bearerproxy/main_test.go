package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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

package app

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// demoServer is the demo world built the way `serve --demo` builds it,
// served over HTTP.
type demoServer struct {
	t     *testing.T
	m     *Main // what serves it, for tests that act on the demo's parts
	url   string
	token string
}

// startDemo builds the demo world on the database at dsn with the clock
// frozen at frozen (zero: the real clock) and serves it until the test
// ends (without the background worker: the tests only read and patch).
func startDemo(t *testing.T, dsn string, frozen time.Time) *demoServer {
	t.Helper()
	return startDemoWith(t, Options{DatabaseURL: dsn, FrozenClock: frozen})
}

// startDemoWith is startDemo with the options o (a data directory, say).
func startDemoWith(t *testing.T, o Options) *demoServer {
	t.Helper()
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "demo-test-pepper-0123456789")
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	h, err := m.prepare(t.Context(), ServeOptions{Demo: true}, m.newRegistry())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := m.buildDemo(t.Context(), h)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &demoServer{t: t, m: m, url: srv.URL + "/api/v1", token: tok.Value}
}

// call sends one request with the demo administrator's token and decodes
// the answer, which must have status 200.
func (d *demoServer) call(method, path string, body any) map[string]any {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequestWithContext(d.t.Context(), method, d.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+d.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != http.StatusOK {
		d.t.Fatalf("%s %s: %d %v (%v)", method, path, res.StatusCode, m, err)
	}
	return m
}

// all reads every page of a list.
func (d *demoServer) all(path string, query url.Values) []map[string]any {
	d.t.Helper()
	var items []map[string]any
	for {
		pg := d.call(http.MethodGet, path+"?"+query.Encode(), nil)
		for _, it := range pg["items"].([]any) {
			items = append(items, it.(map[string]any))
		}
		next, _ := pg["next_cursor"].(string)
		if next == "" {
			return items
		}
		query.Set("cursor", next)
	}
}

// timeOf parses an RFC 3339 member of an answer.
func timeOf(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, v.(string))
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}

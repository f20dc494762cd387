package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scripted answers each request with the next status (and Retry-After
// when given), recording the bodies it received.
type scripted struct {
	mu     sync.Mutex
	steps  []string // "429:2" = 429 with Retry-After 2; "503" = without
	bodies []string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	step := "200"
	if len(s.steps) > 0 {
		step, s.steps = s.steps[0], s.steps[1:]
	}
	s.mu.Unlock()
	code, after, _ := strings.Cut(step, ":")
	if after != "" {
		w.Header().Set("Retry-After", after)
	}
	w.WriteHeader(map[string]int{"200": 200, "429": 429, "503": 503}[code])
}

func TestRetrying_429And503_RepeatedAfterRetryAfter_WithTheBody(t *testing.T) {
	tests := []struct {
		name   string
		steps  []string
		status int
		sends  int
		waits  []time.Duration
	}{
		{"429 then success", []string{"429:2", "200"}, 200, 2, []time.Duration{2 * time.Second}},
		{"503 then 429 then success", []string{"503:0", "429:1", "200"}, 200, 3, []time.Duration{0, time.Second}},
		{"503 without Retry-After is final", []string{"503"}, 503, 1, nil},
		{"a wait beyond the bound is final", []string{"429:61"}, 429, 1, nil},
		{"bounded", []string{"429:1", "429:1", "429:1", "429:1", "429:1", "429:1", "200"}, 429, 6,
			[]time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := &scripted{steps: tc.steps}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			var waits []time.Duration
			rt := &retrying{next: http.DefaultTransport, sleep: func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}}
			req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(`{"a":1}`))
			res, err := (&http.Client{Transport: rt}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status || len(srv.bodies) != tc.sends {
				t.Fatalf("status %d after %d sends, want %d after %d", res.StatusCode, len(srv.bodies), tc.status, tc.sends)
			}
			for _, b := range srv.bodies {
				if b != `{"a":1}` {
					t.Fatalf("body %q sent", b)
				}
			}
			if d := cmp.Diff(tc.waits, waits); d != "" {
				t.Fatalf("waits (-want +got):\n%s", d)
			}
		})
	}
}

func TestRetrying_CancelledWhileWaiting_Stops(t *testing.T) {
	hs := httptest.NewServer(&scripted{steps: []string{"429:30"}})
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL, nil)
	start := time.Now()
	_, err := (&http.Client{Transport: newRetrying(http.DefaultTransport)}).Do(req)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"platformapi/api/apitest"
)

// lossyProxy stands between the provider and the server. The first answer
// to each create path in lose is lost after the server did the work (the
// client gets 502), and the first read of a customer is answered 503 with
// Retry-After: 1. It records every create it forwards.
type lossyProxy struct {
	mu      sync.Mutex
	lose    map[string]bool     // create paths whose next answer is lost
	busy    bool                // the next customer read answers 503
	creates map[string][]string // path → "key replayed=…" per forwarded create
	proxy   *httputil.ReverseProxy
}

func newLossyProxy(t *testing.T, target string, lose ...string) (*lossyProxy, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{lose: map[string]bool{}, busy: true, creates: map[string][]string{},
		proxy: httputil.NewSingleHostReverseProxy(u)}
	for _, path := range lose {
		p.lose[path] = true
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// ServeHTTP forwards r, losing or delaying answers as configured.
func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	read := r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/customers/")
	busy, lose := read && p.busy, r.Method == http.MethodPost && p.lose[r.URL.Path]
	if busy {
		p.busy = false
	}
	if lose {
		p.lose[r.URL.Path] = false
	}
	p.mu.Unlock()
	if busy {
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"code":"unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	rec := httptest.NewRecorder()
	p.proxy.ServeHTTP(rec, r)
	if r.Method == http.MethodPost {
		p.mu.Lock()
		p.creates[r.URL.Path] = append(p.creates[r.URL.Path], fmt.Sprintf("%s replayed=%s",
			r.Header.Get("Idempotency-Key"), rec.Header().Get(replayedHeader)))
		p.mu.Unlock()
	}
	if lose {
		http.Error(w, "answer lost", http.StatusBadGateway)
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// TestAcc_RetriedApply_BooksOneCustomerAndOneProject: the answers to the
// creates are lost after the server made the customer and the project;
// applying again sends the same derived Idempotency-Keys, gets the first
// answers replayed, and the installation holds one of each.
func TestAcc_RetriedApply_BooksOneCustomerAndOneProject(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	p, url := newLossyProxy(t, a.HTTP.URL, "/api/v1/customers", "/api/v1/projects")
	cfg := a.provider(a.token, false, url) + projectConfig("Web shop", `["app-api"]`, "  locked = true\n")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: says("create customer failed", "HTTP 502"),
		}, {
			Config:      cfg,
			ExpectError: says("create project failed", "HTTP 502"),
		}, {
			Config: cfg,
			Check: func(*terraform.State) error {
				for _, list := range []string{"/api/v1/customers", "/api/v1/projects"} {
					if n := len(a.get(t, list)["items"].([]any)); n != 1 {
						return fmt.Errorf("%s holds %d, want 1", list, n)
					}
				}
				return retriedWithSameKey(p)
			},
		}, {
			Config: a.provider(a.destroyer, true) + removedCustomer,
		}},
	})
	if p.busy {
		t.Fatal("the 503 with Retry-After was never answered")
	}
}

// retriedWithSameKey checks each create was sent twice with one key and
// the second answer was the replay of the first.
func retriedWithSameKey(p *lossyProxy) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range []string{"/api/v1/customers", "/api/v1/projects"} {
		sent := p.creates[path]
		if len(sent) == 0 {
			return fmt.Errorf("no create sent to %s", path)
		}
		key, _, _ := strings.Cut(sent[0], " ")
		want := []string{key + " replayed=", key + " replayed=true"}
		if d := cmp.Diff(want, sent); d != "" || !strings.HasPrefix(key, "tf-platformapi_") {
			return fmt.Errorf("%s creates (-want +got):\n%s", path, d)
		}
	}
	return nil
}

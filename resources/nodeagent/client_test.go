package nodeagent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
)

func TestClient_AgentRefusals_DomainErrors(t *testing.T) {
	cfg := newConfig(t)
	cfg.MaxCacheBytes = 1000
	writeModel(t, cfg.StoreRoot, "models/acme/big", map[string][]byte{"w.bin": randomBytes(4000)})
	writeModel(t, cfg.StoreRoot, "models/acme/small", map[string][]byte{"w.bin": randomBytes(100)})
	writeFile(t, filepath.Join(cfg.StoreRoot, "models/acme/bad", resources.CentralManifestName), "junk\n")
	ta := startAgent(t, cfg)
	ctx := context.Background()
	cases := []struct {
		name, repo, source string
		kind               resources.Kind
		code, says         string
	}{
		{"insufficient disk", "acme/big", "models/acme/big",
			resources.KindConflict, resources.CodeInsufficientDisk,
			"needs 4000 bytes, 1000 are free under its agent's --max-cache-bytes cap of 1000"},
		{"central copy invalid", "acme/bad", "models/acme/bad",
			resources.KindConflict, resources.CodeCentralCopyInvalid, "SHA256SUMS line 1"},
		{"invalid source", "acme/small", "/abs", resources.KindInvalid, CodeInvalidSource, "clean"},
		{"invalid repo, not sent", "acme/../x", "models/x",
			resources.KindInvalid, resources.CodeValidationFailed, "org/name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ta.client.Copy(ctx, ta.ep, tc.repo, tc.source)
			e, ok := resources.AsError(err)
			if !ok || e.Kind != tc.kind || e.Code != tc.code || !strings.Contains(e.Detail, tc.says) {
				t.Fatalf("err %#v, want kind %v code %s saying %q", err, tc.kind, tc.code, tc.says)
			}
		})
	}
	if c, err := ta.client.Cache(ctx, ta.ep, "acme/none"); c != nil || err != nil {
		t.Fatalf("Cache of nothing: %+v %v", c, err)
	}
	if err := ta.client.Remove(ctx, ta.ep, "acme/none"); err != nil {
		t.Fatalf("Remove of nothing: %v", err)
	}
	if c, err := ta.client.Copy(ctx, ta.ep, "acme/small", "models/acme/small"); err != nil ||
		c.State != resources.AgentCacheCopying || c.BytesTotal != 100 {
		t.Fatalf("Copy: %+v %v", c, err)
	}
}

func TestClient_NoUsableAnswer_Unreachable(t *testing.T) {
	cfg := newConfig(t)
	ta := startAgent(t, cfg)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	answering := func(status int, ctype, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(slow.Close)
	cases := []struct {
		name, url, key, says string
	}{
		{"agent down", down.URL, ta.ep.Key, "connection refused"},
		{"wrong key", ta.srv.URL, newKey(t), "node key refused"},
		{"500", answering(500, "application/problem+json", `{"status":500,"code":"internal"}`),
			ta.ep.Key, "answered 500"},
		{"502 from a proxy", answering(502, "text/html", "<html>bad gateway</html>"),
			ta.ep.Key, "answered 502"},
		{"not JSON", answering(200, "text/html", "<html>"), ta.ep.Key, "not understood"},
		{"not an agent", answering(404, "text/plain", "404 page not found"), ta.ep.Key, "answered 404"},
		{"slow past the deadline", slow.URL, ta.ep.Key, "deadline"},
		{"no URL", "", ta.ep.Key, "not an http(s) URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			ep := resources.AgentEndpoint{Hostname: "gpu-1", URL: tc.url, Key: tc.key}
			_, err := ta.client.Report(ctx, ep)
			if !errors.Is(err, resources.ErrNodeAgentUnreachable) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err %v, want unreachable saying %q", err, tc.says)
			}
			if strings.Contains(err.Error(), tc.key) || strings.Contains(err.Error(), ta.ep.Key) {
				t.Fatalf("the error holds a key: %v", err)
			}
			if _, ok := resources.AsError(err); ok {
				t.Fatalf("unreachability reported as a refusal: %v", err)
			}
		})
	}
}

// TestClient_UnreachableOrKeyRefused_RetrySaysWhatToDoWithoutSecrets: the
// retry an operation shows names the node and the agent's address (without
// the user information a URL may carry) and what to do: for an agent that
// gives no answer, where to look; for a refused key (401), how to re-enrol.
// Neither holds a key or a password.
func TestClient_UnreachableOrKeyRefused_RetrySaysWhatToDoWithoutSecrets(t *testing.T) {
	ta := startAgent(t, newConfig(t))
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	withUser := strings.Replace(down.URL, "http://", "http://ops:s3cret@", 1) + "/agent?token=s3cret"
	cases := []struct {
		name, url, key, code string
		says                 []string
	}{
		{"agent down", withUser, ta.ep.Key, resources.CodeNodeAgentUnreachable,
			[]string{"node agent of gpu-1 at " + down.URL + "/agent did not answer", "connection refused"}},
		{"wrong key", ta.srv.URL, newKey(t), resources.CodeNodeKeyRefused,
			[]string{"node agent of gpu-1 at " + ta.srv.URL + " refused the node key",
				"platformapi portal node-key gpu-1 --as EMAIL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := resources.AgentEndpoint{Hostname: "gpu-1", URL: tc.url, Key: tc.key}
			_, err := ta.client.Report(context.Background(), ep)
			var ue *resources.AgentUnreachableError
			if !errors.As(err, &ue) {
				t.Fatalf("err %v, want an AgentUnreachableError", err)
			}
			code, reason := ue.Retry()
			for _, s := range tc.says {
				if !strings.Contains(reason, s) {
					t.Fatalf("the reason does not say %q: %s", s, reason)
				}
			}
			if code != tc.code {
				t.Fatalf("code %s, want %s", code, tc.code)
			}
			for _, secret := range []string{"s3cret", tc.key, ta.ep.Key} {
				if strings.Contains(reason+err.Error(), secret) {
					t.Fatalf("a secret is in the reason or the error: %s / %v", reason, err)
				}
			}
		})
	}
}

package webhook

import (
	"context"
	"crypto/hmac"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/resources"
)

const testSecret = "whsec-s3cr3t-test-value"

// received is one request as the fake pipeline saw it.
type received struct {
	method string
	header http.Header
	body   []byte
}

// fakePipeline answers every request with status and keeps what it received.
type fakePipeline struct {
	mu     sync.Mutex
	got    []received
	status int
	answer string
}

func (f *fakePipeline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.got = append(f.got, received{method: r.Method, header: r.Header.Clone(), body: body})
	status, answer := f.status, f.answer
	f.mu.Unlock()
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (f *fakePipeline) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func answering(t *testing.T, status int, answer string) (*fakePipeline, *httptest.Server) {
	f := &fakePipeline{status: status, answer: answer}
	return f, serve(t, f)
}

func dispatch() resources.PromotionDispatch {
	return resources.PromotionDispatch{
		ReleaseOperationID: 42, ProjectID: 7, ProjectShortName: "SHOP",
		Component: "www", SourceEnv: "uat", TargetEnv: "prod",
		Version: "2.0.1", RequestedBy: "user:alice@example.com",
	}
}

const wantBody = `{"release_operation_id":42,"project_id":7,"project_short_name":"SHOP",` +
	`"component":"www","source_env":"uat","target_env":"prod","version":"2.0.1",` +
	`"requested_by":"user:alice@example.com"}`

func TestWebhook_IsAReleasePipeline(t *testing.T) {
	var _ resources.ReleasePipeline = New("http://pipeline.invalid/hook", nil, nil)
}

func TestWebhook_PostsDispatchAsSignedJSONWithHeaders(t *testing.T) {
	f, srv := answering(t, http.StatusAccepted, `{"run":"77"}`)
	p := New(srv.URL+"/hooks/release", []byte(testSecret), nil)
	if err := p.Dispatch(context.Background(), dispatch()); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	got := f.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests; want 1", len(got))
	}
	r := got[0]
	if r.method != http.MethodPost || string(r.body) != wantBody {
		t.Fatalf("request = %s %s; want POST %s", r.method, r.body, wantBody)
	}
	for name, want := range map[string]string{
		"Content-Type":        "application/json",
		"Idempotency-Key":     "release:42",
		"X-Platformapi-Event": "release.promotion",
	} {
		if v := r.header.Get(name); v != want {
			t.Errorf("header %s = %q; want %q", name, v, want)
		}
	}
	verifySignature(t, r.header.Get("X-Platformapi-Signature"), r.body)
}

// verifySignature checks sig the way a receiver would: recompute the HMAC of
// the raw body with the shared secret and compare in constant time.
func verifySignature(t *testing.T, sig string, body []byte) {
	t.Helper()
	if !strings.HasPrefix(sig, "sha256=") || len(sig) != len("sha256=")+64 {
		t.Fatalf("signature %q; want sha256=<64 hex>", sig)
	}
	if !hmac.Equal([]byte(sig), []byte(Sign([]byte(testSecret), body))) {
		t.Fatalf("signature %q does not verify with the secret", sig)
	}
	if hmac.Equal([]byte(sig), []byte(Sign([]byte("other"), body))) {
		t.Fatal("signature verifies with a different secret")
	}
}

func TestWebhook_NoSecret_NoSignatureHeader(t *testing.T) {
	f, srv := answering(t, http.StatusOK, "")
	if err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch()); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.requests()[0].header["X-Platformapi-Signature"]; ok {
		t.Fatal("unsigned dispatch carries a signature header")
	}
}

func TestWebhook_SameOperationTwice_SameKeyAndBody(t *testing.T) {
	f, srv := answering(t, http.StatusOK, "")
	p := New(srv.URL, []byte(testSecret), nil)
	for range 2 {
		if err := p.Dispatch(context.Background(), dispatch()); err != nil {
			t.Fatal(err)
		}
	}
	got := f.requests()
	a, b := got[0], got[1]
	if a.header.Get("Idempotency-Key") != b.header.Get("Idempotency-Key") || string(a.body) != string(b.body) ||
		a.header.Get("X-Platformapi-Signature") != b.header.Get("X-Platformapi-Signature") {
		t.Fatal("two dispatches of one operation differ; the pipeline could not deduplicate them")
	}
}

func TestWebhook_2xx_Accepted(t *testing.T) {
	for _, status := range []int{200, 201, 202, 204} {
		_, srv := answering(t, status, "")
		if err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch()); err != nil {
			t.Errorf("HTTP %d: err = %v; want nil", status, err)
		}
	}
}

func TestWebhook_5xx_Unavailable(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504} {
		_, srv := answering(t, status, "down for maintenance")
		err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch())
		if !errors.Is(err, resources.ErrPipelineUnavailable) || !strings.Contains(err.Error(), strconv.Itoa(status)) {
			t.Errorf("HTTP %d: err = %v; want ErrPipelineUnavailable naming the status", status, err)
		}
	}
}

func TestWebhook_429And408_Unavailable(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusRequestTimeout} {
		_, srv := answering(t, status, "")
		err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch())
		if !errors.Is(err, resources.ErrPipelineUnavailable) {
			t.Errorf("HTTP %d: err = %v; want ErrPipelineUnavailable", status, err)
		}
	}
}

func TestWebhook_4xx_NotRetryableAndNamesStatus(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 422} {
		_, srv := answering(t, status, `{"error":"bad component"}`)
		err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch())
		if err == nil || errors.Is(err, resources.ErrPipelineUnavailable) {
			t.Errorf("HTTP %d: err = %v; want a plain error", status, err)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Itoa(status)) {
			t.Errorf("HTTP %d: err = %v; want it to name the status", status, err)
		}
	}
}

func TestWebhook_ClosedConnection_Unavailable(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_ = conn.Close()
	}))
	err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch())
	if !errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("err = %v; want ErrPipelineUnavailable", err)
	}
}

func TestWebhook_NothingListening_Unavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	err := New(url, nil, nil).Dispatch(context.Background(), dispatch())
	if !errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("err = %v; want ErrPipelineUnavailable", err)
	}
}

// stall is a pipeline that reads the request and then never answers; it gives
// up once the client hung up (which the server notices only after the body
// was read) or after a few seconds.
func stall() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
}

func TestWebhook_SlowPastTimeout_Unavailable(t *testing.T) {
	srv := serve(t, stall())
	p := New(srv.URL, nil, &http.Client{Timeout: 50 * time.Millisecond})
	start := time.Now()
	err := p.Dispatch(context.Background(), dispatch())
	if !errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("err = %v; want ErrPipelineUnavailable", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Dispatch took %v; the timeout was not honoured", el)
	}
}

func TestWebhook_ContextDeadline_UnavailableWrapsDeadline(t *testing.T) {
	srv := serve(t, stall())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := New(srv.URL, nil, nil).Dispatch(ctx, dispatch())
	if !errors.Is(err, resources.ErrPipelineUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want ErrPipelineUnavailable wrapping DeadlineExceeded", err)
	}
}

func TestWebhook_Redirect_NotFollowed(t *testing.T) {
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { followed.Add(1) })
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	srv := serve(t, mux)
	client := &http.Client{} // a caller's client that would follow redirects
	err := New(srv.URL+"/hook", []byte(testSecret), client).Dispatch(context.Background(), dispatch())
	if err == nil || errors.Is(err, resources.ErrPipelineUnavailable) || !strings.Contains(err.Error(), "307") {
		t.Fatalf("err = %v; want a plain error naming 307", err)
	}
	if followed.Load() != 0 {
		t.Fatal("the redirect was followed; the signed dispatch went elsewhere")
	}
	if client.CheckRedirect != nil || client.Timeout != 0 {
		t.Fatal("New changed the caller's client")
	}
}

func TestWebhook_DefaultClient_BoundedTimeout(t *testing.T) {
	p := New("http://pipeline.invalid/hook", nil, nil)
	if p.hc.Timeout != 10*time.Second || p.hc.CheckRedirect == nil {
		t.Fatalf("default client timeout = %v, redirect check set = %v; want 10s, true",
			p.hc.Timeout, p.hc.CheckRedirect != nil)
	}
	p = New("http://pipeline.invalid/hook", nil, &http.Client{Timeout: time.Second})
	if p.hc.Timeout != time.Second {
		t.Fatalf("given timeout replaced: %v", p.hc.Timeout)
	}
}

func TestWebhook_ErrorsNeverCarryTheSecretOrURLCredentials(t *testing.T) {
	_, srv := answering(t, http.StatusBadRequest, "bad signature for "+testSecret)
	secret := []byte(testSecret)
	url := strings.Replace(srv.URL, "http://", "http://ci:hunter2@", 1) + "/hook/tok-path?token=tok-query"
	err := New(url, secret, nil).Dispatch(context.Background(), dispatch())
	if err == nil {
		t.Fatal("want an error")
	}
	srv.Close()
	err2 := New(url, secret, nil).Dispatch(context.Background(), dispatch())
	for _, e := range []error{err, err2} {
		for _, leak := range []string{testSecret, "hunter2", "tok-path", "tok-query"} {
			if e == nil || strings.Contains(e.Error(), leak) {
				t.Fatalf("err = %v; must exist and not carry %q", e, leak)
			}
		}
	}
}

func TestWebhook_LongAnswer_QuotedBounded(t *testing.T) {
	_, srv := answering(t, http.StatusBadRequest, strings.Repeat("x", 1<<20))
	err := New(srv.URL, nil, nil).Dispatch(context.Background(), dispatch())
	if err == nil || len(err.Error()) > 400 {
		t.Fatalf("error of %d bytes; want a bounded quote", len(err.Error()))
	}
}

func TestWebhook_BadURL_PlainErrorAndNoOperationID_Refused(t *testing.T) {
	err := New("://nope", nil, nil).Dispatch(context.Background(), dispatch())
	if err == nil || errors.Is(err, resources.ErrPipelineUnavailable) {
		t.Fatalf("bad URL err = %v; want a plain error", err)
	}
	f, srv := answering(t, http.StatusOK, "")
	d := dispatch()
	d.ReleaseOperationID = 0
	err = New(srv.URL, nil, nil).Dispatch(context.Background(), d)
	if err == nil || errors.Is(err, resources.ErrPipelineUnavailable) || len(f.requests()) != 0 {
		t.Fatalf("dispatch without id: err = %v, requests = %d; want a plain error, none sent", err, len(f.requests()))
	}
}

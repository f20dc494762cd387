package provider

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Retry bounds: at most maxRetries repeats of one request, and none when
// the server asks to wait longer than maxRetryWait.
const (
	maxRetries   = 5
	maxRetryWait = 60 * time.Second
)

// retrying repeats a request answered 429 or 503 with a Retry-After header
// after the time it names (an answer without one is final: retrying will
// not help, as the contract says). Bodies are replayed through GetBody; a
// create repeats its Idempotency-Key, so a repeat never books twice.
type retrying struct {
	next  http.RoundTripper
	sleep func(ctx context.Context, d time.Duration) error
}

func newRetrying(next http.RoundTripper) *retrying {
	return &retrying{next: next, sleep: sleepCtx}
}

// RoundTrip sends req, repeating it as described on retrying.
func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		res, err := t.next.RoundTrip(req)
		if err != nil || attempt == maxRetries {
			return res, err
		}
		wait, ok := retryAfter(res)
		if !ok || wait > maxRetryWait || (req.Body != nil && req.GetBody == nil) {
			return res, nil
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		if req, err = rewind(req); err != nil {
			return nil, err
		}
	}
}

// retryAfter is how long a 429 or 503 answer asks to wait.
func retryAfter(res *http.Response) (time.Duration, bool) {
	if res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	h := res.Header.Get("Retry-After")
	if h == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(h); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// rewind is req with a fresh copy of its body.
func rewind(req *http.Request) (*http.Request, error) {
	if req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

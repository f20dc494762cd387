// Package webhook is the resources.ReleasePipeline adapter for a pipeline
// that is started by an HTTP webhook: each dispatch is one JSON POST to a
// configured URL, signed with a shared secret. The pipeline reports the
// outcome back separately (through `platformapi portal deploy report`), so
// this adapter never reports.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"platformapi/resources"
	"platformapi/resources/internal/httpx"
)

// Header names and values every dispatch carries.
const (
	HeaderIdempotencyKey = "Idempotency-Key"         // "release:<release_operation_id>"
	HeaderEvent          = "X-Platformapi-Event"     // always EventPromotion
	HeaderSignature      = "X-Platformapi-Signature" // "sha256=<hex HMAC-SHA256(secret, body)>"
	EventPromotion       = "release.promotion"
	SignaturePrefix      = "sha256="
)

const (
	// DefaultTimeout bounds every request of a client built without one.
	DefaultTimeout = 10 * time.Second
	maxBody        = 64 << 10 // bytes of a response body ever read
	maxMessage     = 200      // bytes of the pipeline's message quoted in an error
)

// Pipeline dispatches promotions to one webhook URL. It is safe for concurrent use.
type Pipeline struct {
	url    string
	where  string // scheme and host of url only, for error messages
	secret []byte
	hc     *http.Client
}

// New returns a Pipeline that POSTs each dispatch to url, signing the body
// with secret when secret is non-empty. client may be nil; a client without a
// Timeout gets DefaultTimeout. The Pipeline never follows redirects, so a
// signed dispatch is never sent anywhere but url. The caller's client and
// secret are copied, not changed.
func New(url string, secret []byte, client *http.Client) *Pipeline {
	hc := httpx.Client(client, DefaultTimeout)
	return &Pipeline{url: url, where: redact(url), secret: bytes.Clone(secret), hc: hc}
}

// Sign returns the X-Platformapi-Signature value of body under secret:
// "sha256=" followed by the hex HMAC-SHA256. A receiver verifies a dispatch by
// computing it over the raw body and comparing with hmac.Equal.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return SignaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// Dispatch POSTs d as JSON and returns nil once the pipeline answered 2xx.
// Transport failures, timeouts, 408, 429 and 5xx give an error wrapping
// resources.ErrPipelineUnavailable (retry later); any other answer, a
// redirect included, gives a plain error naming the status. A dispatch
// without a release operation id is refused before anything is sent.
func (p *Pipeline) Dispatch(ctx context.Context, d resources.PromotionDispatch) error {
	if d.ReleaseOperationID <= 0 {
		return errors.New("webhook: dispatch without a release operation id")
	}
	req, err := p.request(ctx, d)
	if err != nil {
		return err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: POST %s: %w: %w", p.where, resources.ErrPipelineUnavailable, transportCause(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody)) // best effort: only quoted in errors
	return p.judge(resp.StatusCode, body)
}

// request builds the signed POST of d.
func (p *Pipeline) request(ctx context.Context, d resources.PromotionDispatch) (*http.Request, error) {
	body, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("webhook: encoding dispatch %d: %w", d.ReleaseOperationID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook: bad pipeline URL %q", p.where)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(HeaderIdempotencyKey, d.IdempotencyKey())
	req.Header.Set(HeaderEvent, EventPromotion)
	if len(p.secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(p.secret, body))
	}
	return req, nil
}

// judge turns the pipeline's answer into Dispatch's result.
func (p *Pipeline) judge(status int, body []byte) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("webhook: POST %s: HTTP %d %q: %w",
			p.where, status, p.quote(body), resources.ErrPipelineUnavailable)
	case status >= 300 && status < 400:
		return fmt.Errorf("webhook: POST %s: HTTP %d: redirect not followed", p.where, status)
	default:
		return fmt.Errorf("webhook: POST %s: refused with HTTP %d %q", p.where, status, p.quote(body))
	}
}

// quote returns at most maxMessage bytes of the pipeline's message, valid
// UTF-8, with the secret removed.
func (p *Pipeline) quote(body []byte) string {
	msg := string(body)
	if len(p.secret) > 0 {
		msg = strings.ReplaceAll(msg, string(p.secret), "[redacted]")
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	return strings.ToValidUTF8(msg, "")
}

// transportCause strips the *url.Error around a transport failure, whose
// message repeats the full URL (query included); the cause stays reachable
// for errors.Is, such as context.DeadlineExceeded.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// redact returns only the scheme and host of raw, for error messages: webhook
// URLs often carry a token in their user info, path or query.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

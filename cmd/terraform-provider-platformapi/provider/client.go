package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// apiPrefix is where an installation serves the API under its portal address.
const apiPrefix = "/api/v1"

// replayedHeader marks an answer replayed for a repeated Idempotency-Key.
const replayedHeader = "Idempotent-Replayed"

// Client is the provider's connection to one installation: the generated
// client over a transport that authenticates and retries 429 and 503 after
// Retry-After, and the provider's destroy switch.
type Client struct {
	api          *platformclient.ClientWithResponses
	allowDestroy bool
}

// NewClient connects to the installation whose portal address is baseURL
// (an address ending in /api/v1 is accepted too) with the bearer token.
func NewClient(baseURL, token, userAgent string, allowDestroy bool) (*Client, error) {
	if u, err := url.Parse(baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not the portal's address: it starts with http:// or https:// "+
			"and names the host, e.g. https://portal.example.internal (the API is at base_url/api/v1)", baseURL)
	}
	server := strings.TrimRight(baseURL, "/")
	if !strings.HasSuffix(server, apiPrefix) {
		server += apiPrefix
	}
	// No overall client timeout: it would cut the bounded retry waits short.
	// Each attempt must start answering within a minute; Terraform's context
	// ends the rest.
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = time.Minute
	hc := &http.Client{Transport: newRetrying(base)}
	auth := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("User-Agent", userAgent)
		return nil
	}
	c, err := platformclient.NewClientWithResponses(server, platformclient.WithHTTPClient(hc),
		platformclient.WithRequestEditorFn(auth))
	if err != nil {
		return nil, fmt.Errorf("base_url %q: %w", baseURL, err)
	}
	return &Client{api: c, allowDestroy: allowDestroy}, nil
}

// apiError is an answer that was not a success: the problem document when
// the server sent one.
type apiError struct {
	Status  int
	Problem platformclient.Problem
}

// Error gives the code and the detail.
func (e *apiError) Error() string {
	if e.Problem.Code == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d): %s", e.Problem.Code, e.Status, e.Problem.Detail)
}

// problemOf turns a failed answer into an *apiError.
func problemOf(res *http.Response, body []byte) error {
	e := &apiError{Status: res.StatusCode}
	_ = json.Unmarshal(body, &e.Problem)
	if e.Problem.Code == "" && e.Problem.Detail == "" {
		e.Problem.Detail = strings.TrimSpace(string(body))
	}
	return e
}

// codeNotFound is the 404 of a path that does not exist, which every
// /api/v1 path answers while the API is turned off (or to a client outside
// the installation's networks): it says nothing about the object.
const codeNotFound = "not_found"

// isNotFound reports whether err is a 404 saying the object does not exist
// (its own code, such as customer_not_found). The generic not_found, or a
// 404 without a problem code (not the platform answering), is not: taken
// as "gone", a switched-off API would empty the state.
func isNotFound(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.Status == http.StatusNotFound &&
		e.Problem.Code != "" && e.Problem.Code != codeNotFound
}

// answer returns the decoded success value v, or the error: the transport's,
// or the problem the server answered instead.
func answer[T any](res *http.Response, body []byte, v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if v == nil || res.StatusCode >= 300 {
		return nil, problemOf(res, body)
	}
	return v, nil
}

// noContent checks an answer without a body (204).
func noContent(res *http.Response, body []byte, err error) error {
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return problemOf(res, body)
	}
	return nil
}

// replayed reports whether the server replayed a stored answer.
func replayed(res *http.Response) bool {
	return res != nil && res.Header.Get(replayedHeader) == "true"
}

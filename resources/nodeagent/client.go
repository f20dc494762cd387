package nodeagent

import (
	"bytes"
	"context"
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

// Limits of the client.
const (
	// DefaultClientTimeout bounds one call of a Client made without an
	// http.Client of the caller's (a shorter context deadline wins).
	DefaultClientTimeout = 30 * time.Second
	maxAnswerBytes       = 32 << 20 // a status with many caches and files
	maxProblemBytes      = 64 << 10
)

// Client speaks the node agent's protocol; it implements
// resources.NodeAgentClient and is safe for concurrent use.
type Client struct {
	hc *http.Client
}

var _ resources.NodeAgentClient = (*Client)(nil)

// NewClient returns a Client over httpClient (nil: one with
// DefaultClientTimeout whose TLS trusts the system's roots). It never
// follows a redirect, so a node key goes only to the agent's own URL.
func NewClient(httpClient *http.Client) *Client {
	return &Client{hc: httpx.Client(httpClient, DefaultClientTimeout)}
}

// Report answers the agent's file system, cap and caches.
func (c *Client) Report(ctx context.Context, ep resources.AgentEndpoint) (
	resources.AgentReport, error) {
	var r resources.AgentReport
	err := c.do(ctx, ep, http.MethodGet, PathStatus, nil, &r)
	return r, err
}

// Copy starts, joins or resumes the copy of repo from source (relative to
// the agent's store root) and answers the cache's state.
func (c *Client) Copy(ctx context.Context, ep resources.AgentEndpoint, repo, source string) (
	resources.AgentCache, error) {
	var out resources.AgentCache
	if err := resources.ValidateRepo(repo); err != nil {
		return out, err
	}
	body, _ := json.Marshal(CopyRequest{Source: source})
	err := c.do(ctx, ep, http.MethodPut, PathCaches+repo, body, &out)
	return out, err
}

// Cache answers repo's cache on the node, nil when the node holds none.
func (c *Client) Cache(ctx context.Context, ep resources.AgentEndpoint, repo string) (
	*resources.AgentCache, error) {
	if err := resources.ValidateRepo(repo); err != nil {
		return nil, err
	}
	var out resources.AgentCache
	if err := c.do(ctx, ep, http.MethodGet, PathCaches+repo, nil, &out); err != nil {
		if e, ok := resources.AsError(err); ok && e.Code == CodeCacheNotFound {
			return nil, nil
		}
		return nil, err
	}
	return &out, nil
}

// Remove deletes repo's cache on the node (stopping its copy); removing
// what is not there succeeds.
func (c *Client) Remove(ctx context.Context, ep resources.AgentEndpoint, repo string) error {
	if err := resources.ValidateRepo(repo); err != nil {
		return err
	}
	err := c.do(ctx, ep, http.MethodDelete, PathCaches+repo, nil, nil)
	return err
}

// do sends one request and decodes a 2xx answer into out (when not nil);
// a refusal comes back as *resources.Error, anything else as an error
// wrapping resources.ErrNodeAgentUnreachable.
func (c *Client) do(ctx context.Context, ep resources.AgentEndpoint, method, p string, body []byte,
	out any) error {
	u, err := agentURL(ep.URL, p)
	if err != nil {
		return unreachable(ep, "its agent URL is unusable: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return unreachable(ep, "the request cannot be built: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+ep.Key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return unreachable(ep, "%s", callError(ctx, err))
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		return answerError(ep, res)
	}
	if out != nil {
		err := json.NewDecoder(io.LimitReader(res.Body, maxAnswerBytes)).Decode(out)
		if err != nil {
			return unreachable(ep, "its answer to %s %s is not understood", method, p)
		}
	}
	return nil
}

// agentURL joins the agent's base URL and a protocol path.
func agentURL(base, p string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", base)
	}
	return strings.TrimRight(u.String(), "/") + p, nil
}

// callError says why a call got no answer, without the request's headers.
func callError(ctx context.Context, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return "no answer before the deadline"
	case ue != nil && ue.Timeout():
		return "no answer before the client's timeout"
	}
	return err.Error()
}

// answerError turns an answer that is not a success into an error: the
// agent's explained refusals into *resources.Error, the rest (401, 5xx,
// what cannot be read) into unreachability.
func answerError(ep resources.AgentEndpoint, res *http.Response) error {
	var p Problem
	err := json.NewDecoder(io.LimitReader(res.Body, maxProblemBytes)).Decode(&p)
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		e := unreachable(ep, "node key refused (401)")
		e.KeyRefused = true
		return e
	case err != nil || p.Code == "":
		return unreachable(ep, "it answered %d without a problem document", res.StatusCode)
	case res.StatusCode >= 500:
		return unreachable(ep, "it answered %d %s", res.StatusCode, p.Code)
	}
	return refusal(ep, res.StatusCode, p)
}

// refusal maps the agent's 4xx problem p to the domain error a caller
// branches on.
func refusal(ep resources.AgentEndpoint, status int, p Problem) error {
	switch {
	case p.Code == resources.CodeInsufficientDisk && p.NeededBytes != nil && p.FreeBytes != nil:
		return resources.Errorf(resources.KindConflict, p.Code, "%s", diskDetail(ep.Hostname, p))
	case status == http.StatusNotFound && p.Code == CodeCacheNotFound:
		return resources.NotFound(p.Code, "%s", p.Detail)
	case status == http.StatusConflict:
		return resources.Errorf(resources.KindConflict, p.Code, "node %s: %s", ep.Hostname, p.Detail)
	case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest:
		return resources.Errorf(resources.KindInvalid, p.Code, "node %s: %s", ep.Hostname, p.Detail)
	}
	return unreachable(ep, "it answered %d %s", status, p.Code)
}

// diskDetail says why a copy onto host does not fit (p: the agent's
// insufficient_disk, with its numbers) and how to make room.
func diskDetail(host string, p Problem) string {
	where, more := "on its cache file system", "free room on its disk"
	if p.MaxCacheBytes != nil {
		where = fmt.Sprintf("under its agent's --max-cache-bytes cap of %d", *p.MaxCacheBytes)
		more = "raise the cap"
	}
	return fmt.Sprintf("the cache of node %s needs %d bytes, %d are free %s; remove caches the "+
		"node no longer needs (DELETE /node-caches/%s/{model_id}) or %s, then copy again",
		host, *p.NeededBytes, *p.FreeBytes, where, host, more)
}

// unreachable is a failure to get a usable answer from ep's agent.
func unreachable(ep resources.AgentEndpoint, format string, args ...any) *resources.AgentUnreachableError {
	return &resources.AgentUnreachableError{Hostname: ep.Hostname, URL: shownURL(ep.URL),
		Why: fmt.Sprintf(format, args...)}
}

// shownURL is an agent's URL as an operator may see it: scheme, host and
// path, without user information, query or fragment; "" when unusable.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

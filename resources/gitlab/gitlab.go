// Package gitlab is the resources.CodeHost adapter for GitLab, over its REST
// API v4 with net/http. It keeps customer groups as top-level groups and
// applies the platform's adoption rule (resources.GroupAdoptable).
package gitlab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"platformapi/resources"
	"platformapi/resources/internal/httpx"
)

const (
	// DefaultTimeout bounds every request of a client built without one.
	DefaultTimeout = 5 * time.Second
	maxBody        = 1 << 20 // bytes of a response body ever read
	maxMessage     = 200     // bytes of a GitLab message quoted in an error
	takenMessage   = "has already been taken"
)

// Client talks to one GitLab installation. It is safe for concurrent use.
type Client struct {
	base  string // e.g. "https://gitlab.example.com", without a trailing slash
	token string
	hc    *http.Client
}

// New returns a Client for the GitLab at baseURL that authenticates with
// token in the PRIVATE-TOKEN header. client may be nil; a client without a
// Timeout gets DefaultTimeout. The Client never follows redirects, so the
// token is never sent anywhere but baseURL.
func New(baseURL, token string, client *http.Client) *Client {
	hc := httpx.Client(client, DefaultTimeout)
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: hc}
}

// apiGroup is the part of GitLab's group representation the adapter reads.
type apiGroup struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Path        string `json:"path"`
	FullPath    string `json:"full_path"`
	Description string `json:"description"`
	WebURL      string `json:"web_url"`
}

func (g *apiGroup) view(adoptable bool) *resources.VCSGroup {
	p := g.FullPath
	if p == "" {
		p = g.Path
	}
	return &resources.VCSGroup{Path: p, Name: g.Name, WebURL: g.WebURL, Adoptable: adoptable}
}

// FindGroup looks the top-level group at path up and judges whether it is
// adoptable: (nil, nil) when GitLab has no group there. It only reads.
func (c *Client) FindGroup(ctx context.Context, path string) (*resources.VCSGroup, error) {
	g, err := c.lookup(ctx, path)
	if err != nil || g == nil {
		return nil, err
	}
	adoptable, err := c.adoptable(ctx, g)
	if err != nil {
		return nil, err
	}
	return g.view(adoptable), nil
}

// EnsureGroup creates the private top-level group at path named name, its
// description carrying resources.ManagedMarker, or adopts the adoptable group
// already there. A group that cannot be adopted gives an error wrapping
// resources.ErrVCSGroupCollision. When another creator wins a race for the
// path, the group it made is looked up again and judged by the same rule.
func (c *Client) EnsureGroup(ctx context.Context, path, name string) (*resources.VCSGroup, error) {
	found, err := c.FindGroup(ctx, path)
	if err != nil {
		return nil, err
	}
	if found != nil {
		return adopt(found, path)
	}
	created, taken, err := c.create(ctx, path, name)
	if err != nil || !taken {
		return created, err
	}
	found, err = c.FindGroup(ctx, path)
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("gitlab: path %q is taken but holds no group it can read: %w",
			path, resources.ErrCodeHostUnreachable)
	}
	return adopt(found, path)
}

// adopt returns g when the adoption rule allows it, else a collision error.
func adopt(g *resources.VCSGroup, path string) (*resources.VCSGroup, error) {
	if !g.Adoptable {
		return nil, fmt.Errorf("gitlab: group %q holds content and is not managed by the platform: %w",
			path, resources.ErrVCSGroupCollision)
	}
	return g, nil
}

// lookup fetches the group at path: nil when GitLab answers 404.
func (c *Client) lookup(ctx context.Context, path string) (*apiGroup, error) {
	api := "/groups/" + url.PathEscape(path)
	status, body, err := c.do(ctx, http.MethodGet, api, nil)
	if err != nil {
		return nil, err
	}
	switch status {
	case http.StatusOK:
		var g apiGroup
		return &g, c.decode(http.MethodGet, api, body, &g)
	case http.StatusNotFound:
		return nil, nil
	default:
		return nil, c.unexpected(http.MethodGet, api, status, body)
	}
}

// adoptable applies resources.GroupAdoptable to g, asking GitLab about
// projects and subgroups only when the marker does not settle it.
func (c *Client) adoptable(ctx context.Context, g *apiGroup) (bool, error) {
	if resources.GroupAdoptable(g.Description, true, true) {
		return true, nil
	}
	projects, err := c.nonEmpty(ctx,
		fmt.Sprintf("/groups/%d/projects?per_page=1&include_subgroups=false&with_shared=false", g.ID))
	if err != nil || projects {
		return false, err
	}
	subgroups, err := c.nonEmpty(ctx, fmt.Sprintf("/groups/%d/subgroups?per_page=1", g.ID))
	if err != nil {
		return false, err
	}
	return resources.GroupAdoptable(g.Description, projects, subgroups), nil
}

// nonEmpty reports whether the list at api has at least one item.
func (c *Client) nonEmpty(ctx context.Context, api string) (bool, error) {
	status, body, err := c.do(ctx, http.MethodGet, api, nil)
	if err != nil {
		return false, err
	}
	if status != http.StatusOK {
		return false, c.unexpected(http.MethodGet, api, status, body)
	}
	var items []json.RawMessage
	if err := c.decode(http.MethodGet, api, body, &items); err != nil {
		return false, err
	}
	return len(items) > 0, nil
}

// createBody is the JSON body of POST /groups.
type createBody struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Description string `json:"description"`
	Visibility  string `json:"visibility"`
}

// create makes the group; taken is true when GitLab says the path (or name)
// is already taken, which means another creator got there first.
func (c *Client) create(ctx context.Context, path, name string) (g *resources.VCSGroup, taken bool, err error) {
	const api = "/groups"
	req := createBody{Name: name, Path: path, Description: resources.ManagedMarker, Visibility: "private"}
	status, body, err := c.do(ctx, http.MethodPost, api, req)
	if err != nil {
		return nil, false, err
	}
	switch {
	case status == http.StatusCreated || status == http.StatusOK:
		var made apiGroup
		if err := c.decode(http.MethodPost, api, body, &made); err != nil {
			return nil, false, err
		}
		return made.view(true), false, nil
	case status == http.StatusBadRequest && bytes.Contains(body, []byte(takenMessage)):
		return nil, true, nil
	default:
		return nil, false, c.unexpected(http.MethodPost, api, status, body)
	}
}

// do sends one request to the API and returns the status and the (bounded)
// body of any answer it can hand to the caller. Transport failures, timeouts,
// 5xx, 429 and refused credentials come back as errors wrapping
// resources.ErrCodeHostUnreachable.
func (c *Client) do(ctx context.Context, method, api string, in any) (int, []byte, error) {
	req, err := c.request(ctx, method, api, in)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("gitlab: %s %s: %w: %w", method, api, resources.ErrCodeHostUnreachable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, fmt.Errorf("gitlab: %s %s: reading the answer: %w: %w",
			method, api, resources.ErrCodeHostUnreachable, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return 0, nil, fmt.Errorf("gitlab: %s %s: not authorised (HTTP %d): %w",
			method, api, resp.StatusCode, resources.ErrCodeHostUnreachable)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return 0, nil, fmt.Errorf("gitlab: %s %s: HTTP %d: %w",
			method, api, resp.StatusCode, resources.ErrCodeHostUnreachable)
	}
	return resp.StatusCode, body, nil
}

// request builds an authenticated API request, with in as its JSON body when non-nil.
func (c *Client) request(ctx context.Context, method, api string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("gitlab: encoding %s %s: %w", method, api, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v4"+api, body)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %s %s: bad base URL: %w", method, api, resources.ErrCodeHostUnreachable)
	}
	req.Header.Set("PRIVATE-TOKEN", c.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// decode parses a successful answer; an answer it cannot parse is a failing code host.
func (c *Client) decode(method, api string, body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("gitlab: %s %s: unreadable answer: %w: %w", method, api, resources.ErrCodeHostUnreachable, err)
	}
	return nil
}

// unexpected describes an answer the adapter has no use for, quoting at most
// maxMessage bytes of GitLab's message with the token removed.
func (c *Client) unexpected(method, api string, status int, body []byte) error {
	msg := string(body)
	if c.token != "" {
		msg = strings.ReplaceAll(msg, c.token, "[redacted]")
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	msg = strings.ToValidUTF8(msg, "")
	return fmt.Errorf("gitlab: %s %s: unexpected HTTP %d %q: %w",
		method, api, status, msg, resources.ErrCodeHostUnreachable)
}

// Package prometheus is the resources.Monitor adapter for Prometheus: it
// reads the AI nodes' live values from node-exporter, DCGM GPU-exporter and
// platform node-collector metrics with ONE instant query per snapshot over
// the Prometheus HTTP API (POST /api/v1/query), bounded by a timeout.
// docs/monitoring.md lists the metrics and the query.
package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"platformapi/resources"
)

// Defaults of a Client.
const (
	DefaultTimeout = resources.MonitoringTimeout
	DefaultNodeJob = "node"
	maxBody        = 8 << 20 // bytes of an answer ever read
)

// Config configures a Client.
type Config struct {
	URL     string        // Prometheus base URL, e.g. http://prometheus:9090 (user:password@ for basic auth)
	Timeout time.Duration // bounds one snapshot; 0: DefaultTimeout
	NodeJob string        // job label of the node exporters; "": DefaultNodeJob
	Client  *http.Client  // nil: a plain client
}

// Client reads node snapshots from one Prometheus. It is safe for
// concurrent use.
type Client struct {
	endpoint string
	query    string
	timeout  time.Duration
	hc       *http.Client
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.NodeJob == "" {
		cfg.NodeJob = DefaultNodeJob
	}
	hc := cfg.Client
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{endpoint: strings.TrimRight(cfg.URL, "/") + "/api/v1/query", query: BuildQuery(cfg.NodeJob),
		timeout: cfg.Timeout, hc: hc}
}

// apiResponse is the envelope of a Prometheus HTTP API answer.
type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string   `json:"resultType"`
		Result     []sample `json:"result"`
	} `json:"data"`
}

// sample is one element of an instant vector: labels and [time, "value"].
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// NodeSnapshot sends the one instant query and turns its vector into the
// live values of every node it mentions. Any failure (network, timeout,
// non-200, an error or non-vector answer) wraps
// resources.ErrMonitoringUnreachable.
func (c *Client) NodeSnapshot(ctx context.Context) (resources.NodeSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	body, err := c.post(ctx)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, c.fail("unreadable answer: %v", err)
	}
	if r.Status != "success" || r.Data.ResultType != "vector" {
		return nil, c.fail("answer %s/%s: %s %s", r.Status, r.Data.ResultType, r.ErrorType, r.Error)
	}
	return snapshot(r.Data.Result), nil
}

// post sends the query and returns the body of a 200 answer.
func (c *Client) post(ctx context.Context) ([]byte, error) {
	form := url.Values{"query": {c.query}, "timeout": {strconv.FormatFloat(c.timeout.Seconds(), 'f', -1, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, c.fail("bad URL: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, c.fail("reading the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, c.fail("HTTP %d", resp.StatusCode)
	}
	return body, nil
}

func (c *Client) fail(format string, args ...any) error {
	return fmt.Errorf("prometheus: query: %s: %w", fmt.Sprintf(format, args...), resources.ErrMonitoringUnreachable)
}

var _ resources.Monitor = (*Client)(nil)

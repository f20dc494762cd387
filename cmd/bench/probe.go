package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// probe is one request like those of a load, sent once before it: a load
// whose request is refused would measure the refusal, not the operation.
type probe struct {
	method, path, token, body string
	header                    map[string]string
	// mcp: the answer is a JSON-RPC result that must not be a tool error.
	mcp bool
}

// check sends the probe to base and returns an error quoting the answer
// unless it is 2xx (and, for MCP, not a tool error).
func (p probe) check(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, cmpStr(p.method, http.MethodGet), base+p.path,
		strings.NewReader(p.body))
	if err != nil {
		return err
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 2048))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s answered %d: %s", req.Method, p.path, res.StatusCode, body)
	}
	if p.mcp && bytes.Contains(body, []byte(`"isError":true`)) {
		return fmt.Errorf("the tool call answered a tool error: %s", body)
	}
	return nil
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mcpProbe(token string) probe {
	return probe{method: http.MethodPost, path: "/mcp", token: token, mcp: true,
		header: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-ai-model",` +
			`"arguments":{"model_id":"1"}}}`}
}

func postProbe(token, key, run string) probe {
	p := probe{method: http.MethodPost, path: "/api/v1/ai/models", token: token,
		header: map[string]string{"Content-Type": "application/json"},
		body:   `{"repo":"bench-` + run + `/probe","summary":"created by the benchmark"}`}
	if key != "" {
		p.header[IdempotencyKey] = key
	}
	return p
}

// IdempotencyKey is the header a keyed POST sends.
const IdempotencyKey = "Idempotency-Key"

// statuses counts the server's answers by status from its metrics
// (platformapi_http_requests_total): it sees the in-process GET of an MCP
// tool call too, whose refusal reaches wrk as a 200 tool error.
type statuses map[string]float64

var requestsLine = regexp.MustCompile(`^platformapi_http_requests_total\{operation="([^"]*)",status="(\d+)"\} (\S+)$`)

func serverStatuses(ctx context.Context, p *process) (statuses, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := statuses{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if m := requestsLine.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.ParseFloat(m[3], 64)
			out[m[1]+" "+m[2]] = n
		}
	}
	return out, sc.Err()
}

// non2xxSince is how many answers other than 2xx the server gave since
// before (the bench's own metrics scrapes are 200). Status 499 (the client
// hung up) is not counted: wrk closes its connections at the end of a load
// with requests in flight, which no one receives.
func (s statuses) non2xxSince(before statuses) int {
	n := 0.0
	for k, v := range s {
		if st := k[strings.LastIndexByte(k, ' ')+1:]; st[0] != '2' && st != "499" {
			n += v - before[k]
		}
	}
	return int(n)
}

// profile fetches, while the load runs, a CPU profile and the allocations
// (a delta) of the server into the -profile directory, as KEY.cpu.pprof and
// KEY.allocs.pprof; the returned function waits for both.
func profile(ctx context.Context, c config, s step) func() {
	if c.profile == "" || s.l.server.pprof == "" {
		return func() {}
	}
	secs := strconv.Itoa(max(1, int(c.duration.Seconds())-1))
	var wg sync.WaitGroup
	for kind, path := range map[string]string{"cpu": "/debug/pprof/profile", "allocs": "/debug/pprof/allocs"} {
		wg.Go(func() {
			out := filepath.Join(c.profile, s.key+"."+kind+".pprof")
			if err := fetchTo(ctx, s.l.server.pprof+path+"?seconds="+secs, out); err != nil {
				log.Printf("profile %s: %v", out, err)
			}
		})
	}
	return wg.Wait
}

func fetchTo(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, res.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

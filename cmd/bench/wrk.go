package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// load is one wrk run: a Lua script building each request.
type load struct {
	name   string
	server *process // the server loaded
	script string   // Lua defining request()
	conns  int
	probe  probe    // one request like the load's, checked first
	tokens []string // the tokens the load rotates (none: the bare handler)
	rate   int      // > 0: paced at this many requests a second (runPaced), not by wrk
	keys   []string // the bearer keys a paced load takes turns with
}

// result is what wrk measured.
type result struct {
	rps          float64
	requests     int
	non2xx       int // answers wrk saw with another status than 2xx or 3xx
	serverNon2xx int // answers other than 2xx the server counted (MCP's inner GET too)
	p50, p99     string
	rssKB        int      // peak RSS of the server during the run, when sampled
	failed       string   // why the load was not run (its probe was refused)
	refusals     []string // the server's log lines on answers other than 2xx, when there were any
	cpu          cpuTimes
	extra        int // rounds merged into this one beyond the first
}

// merge adds the next round b of the same load: counts and CPU add up,
// the rate is the mean of the rounds' (each ran as long), the latencies
// are listed round by round, the peak RSS is the higher.
func (a result) merge(b result) result {
	n := float64(a.extra + 1)
	out := result{extra: a.extra + 1, rps: (a.rps*n + b.rps) / (n + 1),
		requests: a.requests + b.requests,
		non2xx:   a.non2xx + b.non2xx, serverNon2xx: a.serverNon2xx + b.serverNon2xx,
		p50: a.p50 + " " + b.p50, p99: a.p99 + " " + b.p99, rssKB: max(a.rssKB, b.rssKB),
		failed: cmp.Or(a.failed, b.failed), refusals: append(slices.Clip(a.refusals), b.refusals...),
		cpu: cpuTimes{}}
	for k, v := range a.cpu {
		out.cpu[k] += v
	}
	for k, v := range b.cpu {
		out.cpu[k] += v
	}
	return out
}

// valid reports whether the load ran and every answer was a success, so
// its figure measures the operation and not a refusal.
func (r result) valid() bool {
	return r.failed == "" && r.requests > 0 && r.non2xx == 0 && r.serverNon2xx == 0
}

var (
	nonWord  = regexp.MustCompile(`[^A-Za-z0-9]+`)
	rpsRe    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	totalRe  = regexp.MustCompile(`(\d+) requests in`)
	non2xxRe = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	p50Re    = regexp.MustCompile(`(?m)^\s+50%\s+(\S+)`)
	p99Re    = regexp.MustCompile(`(?m)^\s+99%\s+(\S+)`)
)

// run runs wrk for c.duration (a paced load: runPaced); with pid > 0 it
// samples that process's RSS.
func (l load) run(ctx context.Context, c config, pid int) (result, error) {
	if l.rate > 0 {
		return runPaced(ctx, l.server.url, l.probe.path, l.keys, l.rate, cmp.Or(l.conns, c.conns), c.duration)
	}
	path := filepath.Join(c.work, nonWord.ReplaceAllString(l.name, "_")+".lua")
	if err := os.WriteFile(path, []byte(l.script), 0o600); err != nil {
		return result{}, err
	}
	conns := l.conns
	if conns == 0 {
		conns = c.conns
	}
	cmd := exec.CommandContext(ctx, "wrk", "-t", strconv.Itoa(c.threads), "-c", strconv.Itoa(conns),
		"-d", c.duration.String(), "--latency", "-s", path, l.server.url)
	stop := make(chan int, 1)
	go func() { stop <- sampleRSS(pid, c.duration+2*time.Second) }()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk %s: %w\n%s", l.name, err, out)
	}
	r := result{rssKB: <-stop, cpu: cpuTimes{}}
	if u := cmd.ProcessState; u != nil {
		r.cpu["wrk"] = u.UserTime() + u.SystemTime()
	}
	s := string(out)
	if m := rpsRe.FindStringSubmatch(s); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := totalRe.FindStringSubmatch(s); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	if m := non2xxRe.FindStringSubmatch(s); m != nil {
		r.non2xx, _ = strconv.Atoi(m[1])
	}
	if m := p50Re.FindStringSubmatch(s); m != nil {
		r.p50 = m[1]
	}
	if m := p99Re.FindStringSubmatch(s); m != nil {
		r.p99 = m[1]
	}
	return r, nil
}

// sampleRSS returns the peak resident set (kB) of pid over d (0 for pid 0).
func sampleRSS(pid int, d time.Duration) int {
	if pid <= 0 {
		return 0
	}
	peak := 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return peak
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				peak = max(peak, kb)
			}
		}
	}
	return peak
}

// luaTokens is a Lua table of the tokens a script rotates through.
func luaTokens(tokens []string) string {
	return "local tokens = {\"" + strings.Join(tokens, "\",\"") + "\"}\n"
}

// luaPrelude numbers wrk's threads so each builds distinct requests.
const luaPrelude = `
local counter = 1
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
end
local function auth(n) return "Bearer " .. tokens[1 + n % #tokens] end
`

// getScript requests path .. random id (1..models) with rotated tokens
// (none when tokens is nil).
func getScript(prefix string, tokens []string) string {
	s := luaTokens(tokens) + luaPrelude + `
request = function()
  counter = counter + 1
  local h = {}
  if #tokens > 0 then h["Authorization"] = auth(counter) end
  return wrk.format("GET", "` + prefix + `" .. math.random(1, ` + strconv.Itoa(models) + `), h)
end
`
	if tokens == nil {
		s = strings.Replace(s, luaTokens(nil), "local tokens = {}\n", 1)
	}
	return s
}

// cachesScript lists the node caches of a random cached model: a filtered
// list whose SQL Bun interpolates, so each model id is a distinct statement
// text (what the statement modes differ on).
func cachesScript(tokens []string) string {
	return luaTokens(tokens) + luaPrelude + `
request = function()
  counter = counter + 1
  return wrk.format("GET", "/api/v1/node-caches?model_id=" .. 10 * math.random(1, ` + strconv.Itoa(models/10) + `),
    {["Authorization"] = auth(counter)})
end
`
}

// fixedGetScript requests one path with rotated tokens.
func fixedGetScript(path string, tokens []string) string {
	return luaTokens(tokens) + luaPrelude + `
request = function()
  counter = counter + 1
  return wrk.format("GET", "` + path + `", {["Authorization"] = auth(counter)})
end
`
}

// mcpScript calls the tool get-ai-model on a random id.
func mcpScript(tokens []string) string {
	return luaTokens(tokens) + luaPrelude + `
request = function()
  counter = counter + 1
  local body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"get-ai-model",' ..
    '"arguments":{"model_id":"' .. math.random(1, ` + strconv.Itoa(models) + `) .. '"}}}'
  return wrk.format("POST", "/mcp", {["Authorization"] = auth(counter), ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream"}, body)
end
`
}

// postScript creates a model with a fresh repo per request; keyed adds a
// fresh Idempotency-Key.
func postScript(tokens []string, keyed bool, run string) string {
	key := ""
	if keyed {
		key = `h["Idempotency-Key"] = "` + run + `-" .. tid .. "-" .. counter`
	}
	return luaTokens(tokens) + luaPrelude + `
request = function()
  counter = counter + 1
  local h = {["Authorization"] = auth(counter), ["Content-Type"] = "application/json"}
  ` + key + `
  local body = '{"repo":"bench-` + run + `/t' .. tid .. '-' .. counter .. '","summary":"created by the benchmark"}'
  return wrk.format("POST", "/api/v1/ai/models", h, body)
end
`
}

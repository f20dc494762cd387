package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"platformapi/resources"
)

// process is a server the bench started.
type process struct {
	cmd   *exec.Cmd
	url   string
	pprof string // base URL of its pprof listener ("" unless -profile)
	log   string // where its stdout and stderr go
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_, _ = p.cmd.Process.Wait()
}

// start runs bin args… with env, waits until probe answers, and returns it.
func start(ctx context.Context, c config, name string, env []string, probe string, args ...string) (*process, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(c.work, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, args[0], append(args[1:], "--addr", addr)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), env...), logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, url: "http://" + addr, log: logf.Name()}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get(p.url + probe); err == nil {
			res.Body.Close()
			return p, nil
		}
	}
	p.stop()
	b, _ := os.ReadFile(logf.Name())
	return nil, fmt.Errorf("%s did not start:\n%s", name, b)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// build compiles platformapi and this command (for `bench bare`). With
// -profile the server is built with the benchpprof tag, which compiles in
// a pprof listener (a normal build has none).
func build(c config) (server, self string, err error) {
	server, self = filepath.Join(c.work, "platformapi"), filepath.Join(c.work, "bench")
	tags := ""
	if c.profile != "" {
		tags = "benchpprof"
	}
	for out, pkg := range map[string]string{server: "./cmd/platformapi", self: "./cmd/bench"} {
		if b, err := exec.Command("go", "build", "-tags", tags, "-o", out, pkg).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("build %s: %v\n%s", pkg, err, b)
		}
	}
	return cmp.Or(c.server, server), self, nil
}

// startServer runs `platformapi serve` on the bench database with the
// access log on (level info, written to a file in the work directory) and
// the run's licence key; mode, when set, is the pgx statement mode
// (default_query_exec_mode).
func startServer(ctx context.Context, c config, w *world, bin, mode string) (*process, error) {
	dsn := w.dsn
	if mode != "" {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "default_query_exec_mode=" + mode
	}
	args := []string{bin, "--database-url", dsn, "--log-level", c.logLevel, "--licence-public-key", w.licenceKey}
	if c.redisURL != "" {
		args = append(args, "--redis-url", c.redisURL)
	}
	args = append(args, "serve")
	env := []string{"PLATFORMAPI_TOKEN_PEPPER=" + pepper}
	var pprofAddr string
	if c.profile != "" {
		var err error
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		env = append(env, "PLATFORMAPI_PPROF_ADDR="+pprofAddr)
	}
	p, err := start(ctx, c, "platformapi-"+mode, env, "/api/v1/openapi.json", args...)
	if p != nil && pprofAddr != "" {
		p.pprof = "http://" + pprofAddr
	}
	return p, err
}

// step is one load of a run and the request that checks it first.
type step struct {
	key string
	l   load
	pid int
}

// references are the bare servers the loads are measured beside.
type references struct {
	bare     *process // chi + pgx on the GET's query
	bare200  *process // net/http answering 200
	bare200h *process // the same, writing verify's four headers
}

// startReferences starts the bare servers (self is this bench's binary);
// on failure none is left running.
func startReferences(ctx context.Context, c config, w *world, self string) (refs references, err error) {
	defer func() {
		if err != nil {
			refs.stop()
		}
	}()
	if refs.bare, err = start(ctx, c, "bare", nil, "/ai/models/1", self, "bare", "--database-url", w.dsn); err != nil {
		return refs, err
	}
	if refs.bare200, err = start(ctx, c, "bare200", nil, "/", self, "bare200"); err != nil {
		return refs, err
	}
	refs.bare200h, err = start(ctx, c, "bare200h", nil, "/", self, "bare200", "-headers")
	return refs, err
}

// stop stops the reference servers that run.
func (refs references) stop() {
	for _, p := range []*process{refs.bare, refs.bare200, refs.bare200h} {
		if p != nil {
			p.stop()
		}
	}
}

// measure runs every load and fills the report.
func measure(ctx context.Context, c config, w *world, r *report) error {
	server, self, err := build(c)
	if err != nil {
		return err
	}
	refs, err := startReferences(ctx, c, w, self)
	if err != nil {
		return err
	}
	defer refs.stop()
	srv, err := startServer(ctx, c, w, server, "")
	if err != nil {
		return err
	}
	defer func() { srv.stop() }()
	pool, poolErr := tokenPool(ctx, c, w)
	run := func(s step) error {
		if err := poolErr(); err != nil {
			return err // the servers stop (deferred), unlike a log.Fatal
		}
		if !c.selected(s.key) {
			return nil
		}
		return runStep(ctx, c, r, s)
	}
	for range max(1, c.rounds) { // fresh tokens and POST keys each round
		all := append(steps(refs.bare, srv, w.depthCursor, pool),
			verifySteps(refs.bare200, refs.bare200h, srv, w.gatewayValues)...)
		all = append(all, pacedVerifySteps(refs.bare200, srv, w.gatewayValues)...)
		for _, s := range all {
			if err := run(s); err != nil {
				return err
			}
		}
	}
	if !c.modes || c.only != "" {
		return nil
	}
	return measureModes(ctx, c, w, server, &srv, pool, run)
}

// selected reports whether -only selects the load key (every load
// without -only).
func (c config) selected(key string) bool {
	return c.only == "" || slices.Contains(strings.Split(c.only, ","), key)
}

// tokenPool mints the tokens of a load: enough for its length at its
// cost, at least rssLiveTokens for the memory load, none for a load -only
// leaves out. A failed mint gives no tokens; err then says why.
func tokenPool(ctx context.Context, c config, w *world) (pool func(key string, cost int) []string, err func() error) {
	var first error
	pool = func(key string, cost int) []string {
		if !c.selected(key) || first != nil {
			return []string{""} // the load does not run: no tokens to mint
		}
		n := poolSize(c.duration, cost)
		if key == "rss" {
			n = max(n, rssLiveTokens) // the memory target counts that many tokens in use
		}
		t, err := w.tokens(ctx, n)
		if err != nil {
			first = fmt.Errorf("mint %d tokens for the %s load: %w", n, key, err)
			return []string{""}
		}
		return t
	}
	return pool, func() error { return first }
}

// steps are the loads of a run, in order: the audit pages before the POSTs
// (page 1 then holds seeded events, like the page at depth).
func steps(bare, srv *process, depthCursor string, pool func(string, int) []string) []step {
	get, mcp, a1, ad := pool("get", 1), pool("mcp", 2), pool("audit1", 1), pool("auditdeep", 1)
	post, keyed, rss := pool("post", 1), pool("keyed", 1), pool("rss", 1)
	run := time.Now().Format("150405")
	return []step{
		{"bare", load{name: "bare chi+pgx GET /ai/models/{id}", server: bare, script: getScript("/ai/models/", nil),
			probe: probe{path: "/ai/models/1"}}, 0},
		{"get", load{name: "platformapi GET /ai/models/{id}", server: srv, script: getScript("/api/v1/ai/models/", get),
			probe: probe{path: "/api/v1/ai/models/1", token: get[0]}, tokens: get}, 0},
		{"baremcp", load{name: "bare MCP (mcp-go) tools/call get-ai-model", server: bare,
			script: mcpScript([]string{""}), probe: mcpProbe("")}, 0}, // no token: nothing checks one
		{"mcp", load{name: "MCP tools/call get-ai-model", server: srv, script: mcpScript(mcp), probe: mcpProbe(mcp[0]),
			tokens: mcp}, 0},
		{"audit1", load{name: "GET /audit-events page 1", server: srv, script: fixedGetScript(auditQuery, a1),
			probe: probe{path: auditQuery, token: a1[0]}, tokens: a1}, 0},
		{"auditdeep", load{name: "GET /audit-events at depth 990,000", server: srv,
			script: fixedGetScript(auditQuery+"&cursor="+depthCursor, ad),
			probe:  probe{path: auditQuery + "&cursor=" + depthCursor, token: ad[0]}, tokens: ad}, 0},
		{"post", load{name: "POST /ai/models (plain)", server: srv, script: postScript(post, false, "p"+run),
			probe: postProbe(post[0], "", "p"+run), tokens: post}, 0},
		{"keyed", load{name: "POST /ai/models (Idempotency-Key)", server: srv, script: postScript(keyed, true, "k"+run),
			probe: postProbe(keyed[0], "k"+run+"-probe", "k"+run), tokens: keyed}, 0},
		{"rss", load{name: "platformapi GET /ai/models/{id}, 64 connections", server: srv, conns: 64,
			script: getScript("/api/v1/ai/models/", rss), probe: probe{path: "/api/v1/ai/models/1", token: rss[0]},
			tokens: rss},
			srv.cmd.Process.Pid},
	}
}

// verifySteps are the loads of /ai-gateway/verify beside its bare
// references: the same requests (a random live key of values each), the
// server's RSS sampled during its load. bare200h writes the headers of
// verify's answer (see bare200Handler).
func verifySteps(bare200, bare200h, srv *process, values []string) []step {
	script, p := verifyScript(values), probe{path: resources.GatewayVerifyPath, token: values[0]}
	return []step{
		{"bare200", load{name: "bare net/http 200 (same requests)", server: bare200, script: script, probe: p}, 0},
		{"bare200h", load{name: "bare net/http 200 with verify's four headers (same requests)",
			server: bare200h, script: script, probe: p}, 0},
		{"verify", load{name: "platformapi /ai-gateway/verify, 10,000 live keys", server: srv, script: script,
			probe: p}, srv.cmd.Process.Pid},
	}
}

// runStep checks the load's request once, then runs the load (profiling the
// server with -profile) and records it; a load whose check fails is recorded
// as failed and not run.
func runStep(ctx context.Context, c config, r *report, s step) error {
	if err := s.l.probe.check(ctx, s.l.server.url); err != nil {
		log.Printf("load %s not run: %v", s.l.name, err)
		r.add(s.key, s.l.name, result{failed: err.Error()})
		return nil
	}
	if c.warm {
		if err := warm(ctx, s.l.server.url, s.l.tokens); err != nil {
			log.Printf("load %s not run: %v", s.l.name, err)
			r.add(s.key, s.l.name, result{failed: err.Error()})
			return nil
		}
	}
	log.Printf("load: %s", s.l.name)
	before, _ := serverStatuses(ctx, s.l.server)
	logFrom := logSize(s.l.server.log)
	cpuBefore := cpuSnapshot(s.l.server.cmd.Process.Pid)
	stopProfile := profile(ctx, c, s)
	res, err := s.l.run(ctx, c, s.pid)
	stopProfile()
	for k, v := range cpuSnapshot(s.l.server.cmd.Process.Pid).since(cpuBefore) {
		res.cpu[k] = v
	}
	if after, err := serverStatuses(ctx, s.l.server); err == nil && before != nil {
		res.serverNon2xx = after.non2xxSince(before)
	}
	if !res.valid() {
		res.refusals = refusedLines(s.l.server.log, logFrom)
	}
	r.add(s.key, s.l.name, res)
	return err
}

// rssLiveTokens is how many tokens the 64-connection load spreads its
// requests over at least (issue 18: peak RSS < 100 MB with 2,000 live
// tokens), so the credential cache and the rate limiter hold as many.
const rssLiveTokens = 2000

// poolSize is how many tokens a load of cost units per request rotates
// through so that no token spends its burst and refill at up to 25,000 requests
// a second: the limiter stays on (each request is charged) but never refuses.
func poolSize(d time.Duration, cost int) int {
	perToken := 600 + 10*d.Seconds() // the burst plus what refills during the load
	return int(25_000*d.Seconds()*float64(cost)/perToken) + 10
}

// measureModes measures a list whose SQL Bun interpolates (a distinct text
// per model id) under each pgx statement mode, restarting the server for
// each.
func measureModes(ctx context.Context, c config, w *world, bin string, srv **process,
	pool func(string, int) []string, run func(step) error) error {
	for _, mode := range []string{"cache_statement", "exec", "simple_protocol"} {
		(*srv).stop()
		var err error
		if *srv, err = startServer(ctx, c, w, bin, mode); err != nil {
			return err
		}
		tokens := pool("modes", 1)
		l := load{name: "GET /node-caches?model_id=…, " + mode, server: *srv, script: cachesScript(tokens),
			probe: probe{path: "/api/v1/node-caches?model_id=10", token: tokens[0]}}
		if err := run(step{key: "mode-" + mode, l: l}); err != nil {
			return err
		}
	}
	return nil
}

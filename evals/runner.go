package evals

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// PortalFunc runs `platformapi portal ARGS…` against the target's database
// and returns its JSON output; a refusal is an error.
type PortalFunc func(ctx context.Context, args []string) ([]byte, error)

// DemoAdmin is the demo world's administrator, who mints suite tokens.
const DemoAdmin = "admin@demo.example"

// Target is the server the suites run against.
type Target struct {
	URL    string       // base URL: MCP at URL/mcp, REST at URL/api/v1
	Token  string       // the runner's token (--token); also lists the permissions to mint with
	Portal PortalFunc   // nil: no portal (suites needing one fail with that reason)
	Client *http.Client // nil: http.DefaultClient
}

func (t Target) httpClient() *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return http.DefaultClient
}

// Options tune a run.
type Options struct {
	Agent  Agent // nil: the scripted agent plays each turn's calls
	Repeat int   // runs per suite (pass^k); < 1 means 1
	// NoTiming leaves latencies out of the results, so that two runs on the
	// same world give byte-identical JSON.
	NoTiming bool
	// StepTimeout bounds each HTTP request of a run (a REST setup step,
	// the MCP handshake, a tools/call or tools/list) and each portal call
	// (the run's token, a portal step); 0: DefaultStepTimeout.
	StepTimeout time.Duration
}

// run is one run of one suite.
type run struct {
	target   Target
	opts     Options
	file     *SuiteFile
	index    int
	vars     vars
	token    string
	sessions map[string]*session
	conv     Conversation // agent-driven runs
	minted   string       // id of the token minted for this run, revoked at its end
	mintedAs string
	scopes   *scopeCache
	res      RunResult
}

// Run plays every suite opts.Repeat times, in order, and reports.
func Run(ctx context.Context, target Target, files []*SuiteFile, opts Options) *Report {
	if opts.Repeat < 1 {
		opts.Repeat = 1
	}
	rep := &Report{Agent: agentName(opts.Agent), Repeat: opts.Repeat}
	start := time.Now()
	scopes := &scopeCache{}
	for _, f := range files {
		sr := SuiteResult{Suite: f.Suite.Name, File: f.Path, Pass: true}
		for i := range opts.Repeat {
			r := &run{target: target, opts: opts, file: f, index: i + 1, vars: vars{}, sessions: map[string]*session{},
				scopes: scopes}
			res := r.play(ctx)
			sr.Runs = append(sr.Runs, res)
			sr.Pass = sr.Pass && res.Pass
		}
		rep.add(sr)
	}
	rep.finish(time.Since(start), opts.NoTiming)
	return rep
}

// play runs the suite once; every failure becomes a reason.
func (r *run) play(ctx context.Context) RunResult {
	start := time.Now()
	r.res.Tools = []CallSummary{}
	if err := r.prepare(ctx); err != nil {
		r.failAt(lineOf(err, r.file.line("fixture")), "fixture: %v", err)
	} else {
		for i, t := range r.file.Suite.Turns {
			if err := r.turn(ctx, i, t); err != nil {
				r.failAt(lineOf(err, r.file.line("turns", i)), "turns[%d]: %v", i, err)
				break
			}
		}
	}
	for _, s := range r.sessions {
		s.close()
	}
	r.revokeMinted(ctx)
	r.res.Pass = len(r.res.Reasons) == 0
	if !r.opts.NoTiming {
		ms := time.Since(start).Milliseconds()
		r.res.LatencyMS = &ms
	}
	return r.res
}

// failAt records a reason and the suite file's line it concerns.
func (r *run) failAt(line int, format string, args ...any) {
	r.res.Reasons = append(r.res.Reasons, fmt.Sprintf(format, args...))
	r.res.Lines = append(r.res.Lines, line)
}

// prepare picks the suite's token, opens its MCP session (so the setup
// steps cannot starve the handshake) and runs the setup steps.
func (r *run) prepare(ctx context.Context) error {
	var err error
	if r.token, err = r.suiteToken(ctx); err != nil {
		return &atLine{r.file.line("fixture", "token"), err}
	}
	if _, err := r.session(ctx, r.token); err != nil {
		return err
	}
	for i, st := range r.file.Suite.Fixture.Setup {
		if err := r.step(ctx, st); err != nil {
			err = fmt.Errorf("setup[%d] %s: %w", i, st.Name, err)
			return &atLine{r.file.line("fixture", "setup", i), err}
		}
	}
	return nil
}

// suiteToken mints the token the fixture asks for, or a token with every
// scope the runner's token holds, when a portal is at hand; else it is
// the runner's token.
func (r *run) suiteToken(ctx context.Context) (string, error) {
	spec := r.file.Suite.Fixture.Token
	if r.target.Portal == nil {
		if spec != nil {
			return "", fmt.Errorf("the fixture mints a token, which needs portal access (an embedded server or --database-url)")
		}
		return r.target.Token, nil
	}
	if spec == nil {
		scopes, err := r.runnerScopes(ctx)
		if err != nil {
			return "", err
		}
		spec = &TokenSpec{Scopes: scopes}
	}
	args := []string{"token", "create", "--as", cmpOr(spec.As, DemoAdmin),
		"--name", fmt.Sprintf("eval %s #%d", r.file.Suite.Name, r.index), "--scopes", strings.Join(spec.Scopes, ",")}
	if spec.Days > 0 {
		args = append(args, "--days", strconv.Itoa(spec.Days))
	}
	out, err := r.portal(ctx, args)
	if err != nil {
		return "", err
	}
	var minted struct{ ID, Token string }
	if err := json.Unmarshal(out, &minted); err != nil || minted.Token == "" {
		return "", fmt.Errorf("portal token create printed no token")
	}
	r.minted, r.mintedAs = minted.ID, cmpOr(spec.As, DemoAdmin)
	return minted.Token, nil
}

// revokeMinted revokes the run's own token, so that the tokens of earlier
// runs never show among the active ones.
func (r *run) revokeMinted(ctx context.Context) {
	if r.minted == "" {
		return
	}
	if _, err := r.portal(ctx, []string{"token", "revoke", r.minted, "--as", r.mintedAs}); err != nil {
		r.failAt(r.file.line("fixture", "token"), "revoking the run's token: %v", err)
	}
}

// scopeCache keeps the runner token's scopes for the whole run.
type scopeCache struct{ scopes []string }

// runnerScopes are the scopes of the runner's token (GET /whoami, once).
func (r *run) runnerScopes(ctx context.Context) ([]string, error) {
	if r.scopes.scopes != nil {
		return r.scopes.scopes, nil
	}
	url := strings.TrimRight(r.target.URL, "/") + APIPrefix + "/whoami"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.target.Token)
	doc, _, err := r.send(req, http.StatusOK, 0)
	if err != nil {
		return nil, err
	}
	var who struct{ Scopes []string }
	if err := json.Unmarshal(mustJSON(doc), &who); err != nil || len(who.Scopes) == 0 {
		return nil, fmt.Errorf("whoami shows no scopes")
	}
	r.scopes.scopes = who.Scopes
	return who.Scopes, nil
}

// step runs one setup step (Repeat times) and captures from its answer.
func (r *run) step(ctx context.Context, st Step) error {
	var doc any
	reached := false
	for range max(st.Repeat, 1) {
		var err error
		if st.REST != nil {
			doc, reached, err = r.restStep(ctx, st.REST)
		} else {
			doc, err = r.portalStep(ctx, st.Portal)
		}
		if err != nil {
			return err
		}
		if reached {
			break
		}
	}
	if st.REST != nil && st.REST.Until != 0 && !reached {
		return fmt.Errorf("no answer with status %d within %d requests", st.REST.Until, max(st.Repeat, 1))
	}
	if fails := r.vars.capture(st.Capture, doc); len(fails) > 0 {
		return fmt.Errorf("%s", strings.Join(fails, "; "))
	}
	return nil
}

func (r *run) portalStep(ctx context.Context, argv []string) (any, error) {
	if r.target.Portal == nil {
		return nil, fmt.Errorf("portal steps need portal access (an embedded server or --database-url)")
	}
	args := make([]string, len(argv))
	for i, a := range argv {
		var err error
		if args[i], err = r.vars.text(a); err != nil {
			return nil, err
		}
	}
	out, err := r.portal(ctx, args)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("portal output is not JSON: %s", cut(string(out), 200))
	}
	return doc, nil
}

// portal runs `platformapi portal ARGS…`, bounded by the step timeout as
// each HTTP request of the run is; an error names the command.
func (r *run) portal(ctx context.Context, args []string) (out []byte, err error) {
	what := "portal " + strings.Join(args[:min(2, len(args))], " ")
	err = within(ctx, r.opts.stepTimeout(), what, func(ctx context.Context) error {
		if out, err = r.target.Portal(ctx, args); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
	return out, err
}

// session returns the MCP session of token, opening it once.
func (r *run) session(ctx context.Context, token string) (*session, error) {
	if s, ok := r.sessions[token]; ok {
		return s, nil
	}
	s, err := openSession(ctx, strings.TrimRight(r.target.URL, "/")+"/mcp", token,
		r.opts.stepTimeout())
	if err != nil {
		return nil, err
	}
	r.sessions[token] = s
	return s, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"platformapi/bunstore"
	"platformapi/evals"
)

// evalEnv prefixes the variables of eval's --token, --base-url and --model
// (PLATFORMAPI_EVAL_<FLAG>); the flag wins.
const evalEnv = "PLATFORMAPI_EVAL_"

// evalAPIKeyEnv holds the key of --agent openai's endpoint.
const evalAPIKeyEnv = evalEnv + "API_KEY"

// evalEnvFlags are eval's flags that read a PLATFORMAPI_EVAL_ variable.
var evalEnvFlags = map[string]bool{"token": true, "base-url": true, "model": true}

// evalFlags are the flags of `platformapi eval`.
type evalFlags struct {
	target, token, addr     string
	agent, baseURL, model   string
	repeat, maxSteps        int
	jsonOut, noTiming, keep bool
	stepTimeout             time.Duration
}

func evalCommand(opts *Options, out io.Writer) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{Use: "eval [flags] FILES...", Short: "Play agent evaluation suites against a server (default: an embedded one)",
		Long: "Plays the suites (evals/suites/*.yaml; schema evals/suite.schema.json) over MCP and REST. Without --target it " +
			"starts a server of its own on a fresh database (on DATABASE_URL's server, else the embedded cluster under " +
			"--data-dir) holding the demo world, its clock frozen (--frozen-clock, default 2026-11-01T12:00:00Z). " +
			"Exits 1 when a suite fails.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			files, err := evals.LoadFiles(args)
			if err != nil {
				return err
			}
			agent, err := f.agentOf()
			if err != nil {
				return err
			}
			rep, err := runEval(cmd.Context(), *opts, f, files, agent)
			if err != nil {
				return err
			}
			if f.jsonOut {
				err = rep.WriteJSON(out)
			} else {
				err = rep.WriteTable(out)
			}
			if err == nil && !rep.OK() {
				err = ErrSuitesFailed
			}
			return err
		}}
	f.register(cmd)
	return cmd
}

// register declares the flags of `eval`.
func (f *evalFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "", "base URL of a running server (MCP at URL/mcp); empty: an embedded server")
	fl.StringVar(&f.addr, "addr", "",
		"HOST:PORT the embedded server listens on (empty: a free loopback port); not with --target")
	fl.StringVar(&f.token, "token", "", "bearer token for --target")
	fl.StringVar(&f.agent, "agent", "scripted", "scripted (play the suites' calls) or openai (a model chooses the calls)")
	fl.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible base URL for --agent openai, e.g. the AI "+
		"gateway's http://HOST:4000/v1; its key is read from "+evalAPIKeyEnv+" (never a flag)")
	fl.StringVar(&f.model, "model", "", "model name for --agent openai")
	fl.IntVar(&f.maxSteps, "max-steps", 8, "model requests per turn for --agent openai")
	fl.IntVar(&f.repeat, "repeat", 1, "runs per suite; the report gives pass^k")
	fl.DurationVar(&f.stepTimeout, "step-timeout", evals.DefaultStepTimeout,
		"bound of each HTTP request of a run (REST setup step, MCP handshake, tool call); "+
			"one left unanswered fails that run")
	fl.BoolVar(&f.jsonOut, "json", false, "print the results as JSON")
	fl.BoolVar(&f.noTiming, "no-timing", false, "leave latencies out, so two runs give byte-identical results")
	fl.BoolVar(&f.keep, "keep-database", false, "keep the embedded server's fresh database after the run")
}

// check refuses counts below 1, which the runner silently took for the
// default (--repeat 0 or -2 ran each suite once and reported pass^1), and
// a step timeout that is not positive.
func (f evalFlags) check() error {
	if f.repeat < 1 {
		return fmt.Errorf("--repeat %d: runs per suite must be at least 1", f.repeat)
	}
	if f.maxSteps < 1 {
		return fmt.Errorf("--max-steps %d: model requests per turn must be at least 1", f.maxSteps)
	}
	if f.stepTimeout <= 0 {
		return fmt.Errorf("--step-timeout %s: the bound of a request must be more than 0", f.stepTimeout)
	}
	return nil
}

// agentOf builds the agent the flags name (nil: scripted).
func (f evalFlags) agentOf() (evals.Agent, error) {
	switch f.agent {
	case "scripted":
		return nil, nil
	case "openai":
		if f.baseURL == "" || f.model == "" {
			return nil, errors.New("--agent openai needs --base-url and --model")
		}
		return &evals.OpenAI{BaseURL: f.baseURL, Model: f.model, APIKey: os.Getenv(evalAPIKeyEnv),
			MaxSteps: f.maxSteps}, nil
	}
	return nil, fmt.Errorf("--agent %q: scripted or openai", f.agent)
}

// runEval plays the files against --target, or against an embedded server
// on a fresh database.
func runEval(ctx context.Context, opts Options, f evalFlags, files []*evals.SuiteFile, agent evals.Agent) (*evals.Report, error) {
	ro := evals.Options{Agent: agent, Repeat: f.repeat, NoTiming: f.noTiming,
		StepTimeout: f.stepTimeout}
	if f.target != "" {
		if f.token == "" {
			return nil, errors.New("--target needs --token")
		}
		if f.addr != "" {
			return nil, errors.New("--addr pins the embedded server's address; with --target no server is started")
		}
		t := evals.Target{URL: f.target, Token: f.token}
		if opts.DatabaseURL != "" { // portal steps act on the target's database
			t.Portal = func(ctx context.Context, args []string) ([]byte, error) {
				return runPortal(ctx, portalGlobals(opts), args)
			}
		}
		return evals.Run(ctx, t, files, ro), nil
	}
	// Listen first: a taken address fails before a database or world is built.
	ln, err := listenTCP(cmp.Or(f.addr, "127.0.0.1:0"), "--addr")
	if err != nil {
		return nil, err
	}
	dsn, drop, err := freshDatabase(ctx, opts)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	if !f.keep {
		defer drop()
	}
	srv, err := StartEvalServerOn(ctx, opts, dsn, ln)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	return evals.Run(ctx, evals.Target{URL: srv.URL, Token: srv.Token, Portal: srv.Portal}, files, ro), nil
}

// portalGlobals are the global flags that point portal commands at the
// configured database.
func portalGlobals(o Options) []string {
	g := []string{"--database-url", o.DatabaseURL}
	if o.TokenPepperFile != "" {
		g = append(g, "--token-pepper-file", o.TokenPepperFile)
	}
	if !o.FrozenClock.IsZero() {
		g = append(g, "--frozen-clock", o.FrozenClock.Format("2006-01-02T15:04:05.999999999Z07:00"))
	}
	return g
}

// freshDatabase creates an empty database for an embedded eval server: on
// the server DATABASE_URL names, else on the embedded cluster (started if
// no server holds it). drop removes it (and stops a cluster it started).
func freshDatabase(ctx context.Context, opts Options) (string, func(), error) {
	admin, stopCluster := opts.DatabaseURL, func() {}
	if admin == "" {
		e, running, err := bunstore.AttachEmbedded(opts.DataDir, opts.Logger)
		if err == nil && !running {
			e, err = bunstore.StartEmbedded(ctx, opts.DataDir, opts.Logger)
			stopCluster = func() { _ = e.Stop() }
		}
		if err != nil {
			return "", nil, err
		}
		admin = e.DSN("postgres")
	}
	name := "platformapi_eval_" + randomSuffix()
	db, err := bunstore.Open(ctx, admin)
	if err == nil {
		_, err = db.ExecContext(ctx, "CREATE DATABASE "+name)
		_ = db.Close()
	}
	if err != nil {
		stopCluster()
		return "", nil, fmt.Errorf("fresh eval database: %w", err)
	}
	drop := func() {
		if db, err := bunstore.Open(context.WithoutCancel(ctx), admin); err == nil {
			if _, err := db.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				opts.Logger.Warn("dropping the eval database", "database", name, "error", err)
			}
			_ = db.Close()
		}
		stopCluster()
	}
	return withDatabase(admin, name), drop, nil
}

// withDatabase points a PostgreSQL URL (or keyword/value DSN) at dbname.
func withDatabase(dsn, dbname string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dsn + " dbname=" + dbname
	}
	q := u.Query()
	q.Del("dbname")
	u.Path, u.RawPath, u.RawQuery = "/"+dbname, "", q.Encode()
	return u.String()
}

// quietLogger is the embedded eval server's logger when the log level was
// left at its default: errors only.
func quietLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelError}))
}

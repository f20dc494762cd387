package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/resources"
)

// NewRootCommand builds the platformapi command tree; out receives JSON results, errOut
// the logs.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	opts := &Options{}
	g := &globalInput{}
	root := &cobra.Command{
		Use: "platformapi", Short: "Management API server of a cloud platform installation",
		SilenceUsage: true, SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return g.apply(cmd, opts, errOut) },
	}
	g.flags(root, opts)
	root.Version = readBuildInfo().String() // --version
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(out)
	root.AddCommand(serveCommand(opts, out), migrateCommand(opts, out), portalCommand(opts, out), evalCommand(opts, out),
		versionCommand(out), nodeAgentCommand(opts))
	for _, c := range append(root.Commands(), root) {
		sayEnv(c)
	}
	strictUsage(root)
	return root
}

// globalInput is what the flags every command takes give as text, parsed
// before the command runs.
type globalInput struct {
	level  levelFlag
	frozen string
}

// flags declares the flags every command takes on root.
func (g *globalInput) flags(root *cobra.Command, opts *Options) {
	f := root.PersistentFlags()
	f.StringVar(&opts.DatabaseURL, "database-url", "", "PostgreSQL URL; empty: a private cluster under --data-dir")
	f.StringVar(&opts.DataDir, "data-dir", ".platformapi",
		"directory of the private PostgreSQL cluster, its log and its generated token pepper")
	f.StringVar(&opts.TokenPepperFile, "token-pepper-file", "", "file holding the token pepper, the secret under "+
		"which token hashes are kept (PLATFORMAPI_TOKEN_PEPPER, the value itself, wins)")
	f.StringVar(&opts.LicencePublicKey, "licence-public-key", "", "the licence vendor's public key licence bundles "+
		"are verified against: the raw 32-byte Ed25519 key in standard base64; empty: no bundle verifies")
	f.StringVar(&opts.RedisURL, "redis-url", "", "Redis shared by every replica: one rate budget per token and "+
		"the change feed; empty: budgets per replica, change feed on PostgreSQL")
	f.Var(&g.level, "log-level", "debug, info, warn or error")
	f.StringVar(&g.frozen, "frozen-clock", "", "RFC 3339 instant every clock of the command stands at; serve "+
		"and eval also freeze the database's clock: for demos and evaluations only")
}

// apply refuses a global flag cmd does not take, reads the environment
// into cmd's flags, then sets opts' logger (buffered for serve, quiet for
// eval unless --log-level is given) and frozen clock.
func (g *globalInput) apply(cmd *cobra.Command, opts *Options, errOut io.Writer) error {
	if err := refuseForeignFlags(cmd); err != nil {
		return err
	}
	if err := applyEnv(cmd, os.Getenv); err != nil {
		return err
	}
	lvl := g.level.Level
	logs := errOut
	if cmd.Name() == "serve" {
		logs, opts.stopLogs = bufferedLog(errOut)
	}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: lvl}))
	if cmd.Name() == "eval" && !cmd.Flags().Changed("log-level") {
		opts.Logger = quietLogger(errOut)
	}
	return parseFrozenClock(g.frozen, &opts.FrozenClock)
}

// serveInput is what serve's flags give as text, parsed when it runs.
type serveInput struct{ networks, proxies, origins, secretFile string }

func serveCommand(opts *Options, out io.Writer) *cobra.Command {
	var so ServeOptions
	var in serveInput
	cmd := &cobra.Command{
		Use: "serve", Short: "Serve the API at /api/v1 and MCP at /mcp (migrates first)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.stopLogs != nil {
				defer opts.stopLogs() // every buffered line is written before serve returns
			}
			applyGCDefault(os.Getenv)
			if err := in.parse(&so); err != nil {
				return err
			}
			m, err := Open(cmd.Context(), *opts)
			if err != nil {
				return err
			}
			defer m.Close()
			return m.Run(cmd.Context(), so, out)
		},
	}
	serveFlags(cmd.Flags(), &so, &opts.StatementTimeout, &in)
	return cmd
}

// parse completes so from the text flags and the secrets' variables.
func (in serveInput) parse(so *ServeOptions) error {
	var err error
	if err := requireAddr(so.Addr, "127.0.0.1:8080", "PLATFORMAPI_ADDR"); err != nil {
		return err
	}
	if so.Networks, err = parsePrefixes(in.networks, "--allowed-networks"); err != nil {
		return err
	}
	if so.TrustedProxies, err = parsePrefixes(in.proxies, "--trusted-proxies"); err != nil {
		return err
	}
	so.GitLabToken = os.Getenv("PLATFORMAPI_GITLAB_TOKEN")
	so.WebhookSecret = os.Getenv("PLATFORMAPI_PIPELINE_WEBHOOK_SECRET")
	so.AllowedOrigins = splitList(in.origins)
	if !strings.HasSuffix(so.GatewayURL, "/v1") {
		return fmt.Errorf("--ai-gateway-url %q must end in /v1", so.GatewayURL)
	}
	if err := checkPortalURL(so.Portal.URL); err != nil {
		return err
	}
	so.Portal.OIDCClientSecret, err = oidcClientSecret(in.secretFile)
	return err
}

// checkPortalURL refuses a --portal-url that cannot begin the sign-in's
// redirect URI: not an absolute http or https URL with a host, or one with
// a user, a query or a fragment ("": each request's own).
func checkPortalURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "") {
		err = errors.New("want the portal's external base URL, such as https://platform.example.com")
	}
	if err != nil {
		return fmt.Errorf("--portal-url %q: %w", s, err)
	}
	return nil
}

// serveFlags declares serve's flags (their variables: envflags.go).
func serveFlags(f *pflag.FlagSet, so *ServeOptions, statementTimeout *time.Duration, in *serveInput) {
	f.StringVar(&so.Addr, "addr", "127.0.0.1:8080", "listen address")
	f.BoolVar(&so.Demo, "demo", false, "set up the demo administrator, enable the API and print an admin token")
	f.StringVar(&in.networks, "allowed-networks", "", "client networks served, CIDR list; others get 404 like "+
		"a disabled API; empty: loopback and private ranges")
	f.StringVar(&in.proxies, "trusted-proxies", "", "reverse proxies, CIDR list, whose X-Forwarded-For or "+
		"Forwarded header names the client; empty: none, the client is the connection's peer")
	f.StringVar(&in.origins, "mcp-allowed-origins", "", "further Origin values accepted on /mcp, "+
		"comma-separated; requests without Origin and loopback origins always pass")
	serveTLSFlags(f, so)
	f.StringVar(&so.GitLabURL, "gitlab-url", "", "GitLab base URL of the code host holding the customers' "+
		"groups; empty: the simulated code host")
	f.StringVar(&so.WebhookURL, "pipeline-webhook-url", "",
		"release pipeline webhook; empty: the simulated pipeline")
	f.DurationVar(&so.ProvisionDelay, "provision-delay", 2*time.Second,
		"how long simulated project provisioning takes")
	f.DurationVar(&so.PipelineDelay, "pipeline-delay", 3*time.Second, "how long a simulated pipeline run takes")
	f.DurationVar(&so.JobTimeout, "job-timeout", 5*time.Minute,
		"a background job running longer is cancelled and retried")
	f.DurationVar(&so.RescueAfter, "job-rescue-after", 10*time.Minute,
		"a job running longer (its server died) is retried")
	f.StringVar(&so.GatewayURL, "ai-gateway-url", resources.DefaultGatewayBaseURL,
		"the AI gateway's OpenAI-compatible base URL clients call, ending in /v1")
	f.StringVar(&so.MetricsAddr, "metrics-addr", "", "serve /metrics on this address instead of on --addr "+
		"(same --allowed-networks, --trusted-proxies and TLS)")
	serveTimeFlags(f, so, statementTimeout)
	f.StringVar(&so.PrometheusURL, "prometheus-url", "", "Prometheus holding the node and GPU exporter metrics "+
		"of the AI nodes; empty: simulated monitoring")
	portalFlags(f, &so.Portal, &in.secretFile)
}

// serveTimeFlags declares serve's timeouts and intervals.
func serveTimeFlags(f *pflag.FlagSet, so *ServeOptions, statementTimeout *time.Duration) {
	f.DurationVar(&so.RequestTimeout, "request-timeout", api.DefaultRequestTimeout, "a request still running "+
		"after this long is cut short: its database work ends, it answers 503 unavailable with Retry-After")
	f.DurationVar(&so.StopDelay, "stop-delay", 0, "after SIGTERM, keep serving this long with "+
		"/readyz answering 503 (the load balancer stops sending), then drain; a second signal "+
		"skips the rest; 0: drain at once")
	f.DurationVar(statementTimeout, "statement-timeout", defaultStatementTimeout, "PostgreSQL "+
		"statement_timeout of the server's connections, lock waits included (503 unavailable); 0: the "+
		"database's own; migrations run without it")
	f.DurationVar(&so.AuthRecheck, "auth-recheck", api.DefaultRecheck, "longest a replica trusts a cached "+
		"credential, and how often it reloads its views of live AI gateway keys and live tokens (the bound "+
		"while the change feed is down)")
	f.DurationVar(&so.ReconcileInterval, "reconcile-interval", bunstore.DefaultReconcileInterval,
		"how often node caches are compared with what the node agents report")
}

// serveTLSFlags declares serve's TLS flags.
func serveTLSFlags(f *pflag.FlagSet, so *ServeOptions) {
	f.StringVar(&so.TLSCertFile, "tls-cert-file", "", "serve HTTPS on --addr and --metrics-addr with this "+
		"certificate (PEM, the chain after it); renewed files are picked up without a restart")
	f.StringVar(&so.TLSKeyFile, "tls-key-file", "", "the certificate's private key (PEM)")
}

// portalFlags declares the people's portal's flags of serve.
func portalFlags(f *pflag.FlagSet, o *PortalOptions, secretFile *string) {
	f.StringVar(&o.OIDCIssuer, "oidc-issuer", "",
		"OpenID provider's issuer URL the portal signs people in with; empty: no sign-in")
	f.StringVar(&o.OIDCClientID, "oidc-client-id", "",
		"the portal's client id at the OpenID provider (the ID token's audience)")
	f.StringVar(secretFile, "oidc-client-secret-file", "",
		"file holding the portal's client secret (PLATFORMAPI_OIDC_CLIENT_SECRET, the value itself, wins)")
	f.StringVar(&o.URL, "portal-url", "",
		"external base URL of the portal, e.g. https://platform.example.com; empty: each request's scheme and host")
}

// oidcClientSecret reads the portal's client secret: env
// PLATFORMAPI_OIDC_CLIENT_SECRET, else the file (empty: none).
func oidcClientSecret(file string) (string, error) {
	if v := os.Getenv("PLATFORMAPI_OIDC_CLIENT_SECRET"); v != "" {
		return v, nil
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--oidc-client-secret-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func migrateCommand(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "migrate", Short: "Apply or show the database schema migrations"}
	cmd.AddCommand(&cobra.Command{Use: "up", Short: "Apply pending migrations", Args: cobra.NoArgs,
		RunE: withMainAnySchema(opts, func(c *cobra.Command, m *Main, _ []string) error {
			applied, err := bunstore.Migrate(c.Context(), m.db)
			if err != nil {
				return err
			}
			return PrintJSON(out, map[string]any{"applied": nonNil(applied)})
		})})
	cmd.AddCommand(&cobra.Command{Use: "status", Short: "List migrations and whether each is applied", Args: cobra.NoArgs,
		RunE: withMainAnySchema(opts, func(c *cobra.Command, m *Main, _ []string) error {
			st, err := bunstore.MigrationStatus(c.Context(), m.db)
			if err != nil {
				return err
			}
			return PrintJSON(out, map[string]any{"migrations": st})
		})})
	return cmd
}

// withMain opens the database for a command and closes it afterwards; a
// database whose schema lacks a migration is refused in one line saying
// so (not with the SQL error of the first missing table).
func withMain(opts *Options, run mainRun) cobraRun {
	return withMainAnySchema(opts, func(cmd *cobra.Command, m *Main, args []string) error {
		pending, err := m.store.PendingMigrations(cmd.Context())
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			return fmt.Errorf("the database is not migrated (%d migrations pending, the first %s): "+
				"run `platformapi migrate up` (serve also migrates)", len(pending), pending[0])
		}
		return run(cmd, m, args)
	})
}

// mainRun is a command's work on the opened database.
type mainRun = func(*cobra.Command, *Main, []string) error

// cobraRun is a command's RunE.
type cobraRun = func(*cobra.Command, []string) error

// withMainAnySchema is withMain without the schema check (migrate).
func withMainAnySchema(opts *Options, run mainRun) cobraRun {
	return func(cmd *cobra.Command, args []string) error {
		m, err := Open(cmd.Context(), *opts)
		if err != nil {
			return err
		}
		defer m.Close()
		return run(cmd, m, args)
	}
}

// parseFrozenClock reads --frozen-clock ("" leaves the clock running).
func parseFrozenClock(s string, at *time.Time) error {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("--frozen-clock %q: want an RFC 3339 instant such as 2026-11-01T12:00:00Z", s)
	}
	*at = t.UTC()
	return nil
}

// PrintJSON writes v as indented JSON, the output of every command.
func PrintJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parsePrefixes reads flag's comma-separated list of networks; an entry
// that is not one is refused naming the flag, its variable and the entry.
func parsePrefixes(s, flag string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, p := range splitList(s) {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %q is not a network in CIDR form, e.g. "+
				"10.0.0.0/8 or fd00::/8 (one address: 10.1.2.3/32)", flag, envPrefix+snakeName(flag), p)
		}
		out = append(out, pfx.Masked())
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ErrSuitesFailed is what `eval` returns when a suite failed; the results
// were printed already.
var ErrSuitesFailed = errors.New("evaluation suites failed")

// defaultStatementTimeout bounds one SQL statement of `serve`.
const defaultStatementTimeout = 10 * time.Second

// refusal is a refusal as a command prints it: code and detail, and each
// other member only when the refusal has it.
type refusal struct {
	Code     string   `json:"code"`
	Detail   string   `json:"detail"`
	Field    string   `json:"field,omitempty"`
	Required []string `json:"required,omitempty"`
	State    string   `json:"state,omitempty"`
	Remedy   string   `json:"remedy,omitempty"`
}

// PrintRefusal prints err as {"error": {code, detail, …}} when it is a
// refusal (a resources.Error) and reports whether it was one.
func PrintRefusal(out io.Writer, err error) bool {
	e, ok := resources.AsError(err)
	if !ok {
		return false
	}
	_ = PrintJSON(out, map[string]refusal{"error": {Code: e.Code, Detail: e.Detail, Field: e.Field,
		Required: e.Required, State: e.State, Remedy: e.Remedy}})
	return true
}

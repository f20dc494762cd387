package app

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/resources"
)

// NewRootCommand builds the platformapi command tree; out receives JSON results, errOut
// the logs.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	opts := &Options{}
	var logLevel, frozen string
	root := &cobra.Command{
		Use: "platformapi", Short: "Management API server of a cloud platform installation",
		SilenceUsage: true, SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Name() == "node-agent" && !cmd.Flags().Changed("log-level") {
				logLevel = cmp.Or(os.Getenv(nodeAgentEnv+"LOG_LEVEL"), logLevel)
			}
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return err
			}
			logs := errOut
			if cmd.Name() == "serve" {
				logs, opts.stopLogs = bufferedLog(errOut)
			}
			opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: lvl}))
			if cmd.Name() == "eval" && !cmd.Flags().Changed("log-level") {
				opts.Logger = quietLogger(errOut)
			}
			return parseFrozenClock(frozen, &opts.FrozenClock)
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&opts.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (env DATABASE_URL); empty: a private cluster under --data-dir")
	f.StringVar(&opts.DataDir, "data-dir", ".platformapi", "directory of the private PostgreSQL cluster and its generated token pepper")
	f.StringVar(&opts.TokenPepperFile, "token-pepper-file", "", "file holding the token pepper (env PLATFORMAPI_TOKEN_PEPPER wins)")
	f.StringVar(&opts.LicencePublicKey, "licence-public-key", os.Getenv("PLATFORMAPI_LICENCE_PUBLIC_KEY"),
		"vendor public key licence bundles are verified against: raw 32-byte Ed25519 key, standard base64 (env PLATFORMAPI_LICENCE_PUBLIC_KEY)")
	f.StringVar(&opts.RedisURL, "redis-url", os.Getenv("REDIS_URL"), "Redis shared by every replica: rate budget and change feed (env REDIS_URL); empty: budgets per replica, change feed on PostgreSQL")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&frozen, "frozen-clock", os.Getenv("PLATFORMAPI_FROZEN_CLOCK"), "RFC 3339 instant every clock stands at "+
		"(env PLATFORMAPI_FROZEN_CLOCK); serve and eval also freeze the database's clock: for demos and evaluations only")
	root.Version = readBuildInfo().String() // --version
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(out)
	root.AddCommand(serveCommand(opts, out), migrateCommand(opts, out), portalCommand(opts, out), evalCommand(opts, out),
		versionCommand(out), nodeAgentCommand(opts))
	return root
}

func serveCommand(opts *Options, out io.Writer) *cobra.Command {
	var so ServeOptions
	var networks, origins, secretFile string
	cmd := &cobra.Command{
		Use: "serve", Short: "Serve the API at /api/v1 and MCP at /mcp (migrates first)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.stopLogs != nil {
				defer opts.stopLogs() // every buffered line is written before serve returns
			}
			err := checkEnvDurations("PLATFORMAPI_REQUEST_TIMEOUT", "PLATFORMAPI_STATEMENT_TIMEOUT")
			if err != nil {
				return err
			}
			applyGCDefault(os.Getenv)
			if so.Networks, err = parsePrefixes(networks); err != nil {
				return fmt.Errorf("--allowed-networks: %w", err)
			}
			so.AllowedOrigins = splitList(origins)
			if !strings.HasSuffix(so.GatewayURL, "/v1") {
				return fmt.Errorf("--ai-gateway-url %q must end in /v1", so.GatewayURL)
			}
			if so.Portal.OIDCClientSecret, err = oidcClientSecret(secretFile); err != nil {
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
	cmd.Flags().StringVar(&so.Addr, "addr", "127.0.0.1:8080", "listen address")
	cmd.Flags().BoolVar(&so.Demo, "demo", false, "set up the demo administrator, enable the API and print an admin token")
	cmd.Flags().StringVar(&networks, "allowed-networks", "", "client networks served, CIDR list (default: loopback and private ranges)")
	cmd.Flags().StringVar(&origins, "mcp-allowed-origins", "", "Origin values allowed on /mcp, comma-separated (default: none; requests without Origin pass)")
	cmd.Flags().StringVar(&so.GitLabURL, "gitlab-url", os.Getenv("PLATFORMAPI_GITLAB_URL"), "GitLab base URL of the code host (env PLATFORMAPI_GITLAB_URL); empty: simulated")
	so.GitLabToken = os.Getenv("PLATFORMAPI_GITLAB_TOKEN")
	f := cmd.Flags()
	f.StringVar(&so.WebhookURL, "pipeline-webhook-url", os.Getenv("PLATFORMAPI_PIPELINE_WEBHOOK_URL"), "release pipeline webhook (env PLATFORMAPI_PIPELINE_WEBHOOK_URL); empty: simulated")
	so.WebhookSecret = os.Getenv("PLATFORMAPI_PIPELINE_WEBHOOK_SECRET")
	f.DurationVar(&so.ProvisionDelay, "provision-delay", 2*time.Second, "how long simulated project provisioning takes")
	f.DurationVar(&so.PipelineDelay, "pipeline-delay", 3*time.Second, "how long a simulated pipeline run takes")
	f.DurationVar(&so.JobTimeout, "job-timeout", 5*time.Minute, "a background job running longer is cancelled and retried")
	f.DurationVar(&so.RescueAfter, "job-rescue-after", 10*time.Minute, "a job running longer (its server died) is retried")
	f.StringVar(&so.GatewayURL, "ai-gateway-url", cmp.Or(os.Getenv("PLATFORMAPI_AI_GATEWAY_URL"), resources.DefaultGatewayBaseURL),
		"AI gateway base URL clients call, ending in /v1 (env PLATFORMAPI_AI_GATEWAY_URL)")
	f.StringVar(&so.MetricsAddr, "metrics-addr", "", "serve /metrics on this address instead of on --addr (same --allowed-networks)")
	f.DurationVar(&so.RequestTimeout, "request-timeout", envDuration("PLATFORMAPI_REQUEST_TIMEOUT", api.DefaultRequestTimeout),
		"a request still running after this long is cut short: its database work ends, it answers 503 unavailable "+
			"(env PLATFORMAPI_REQUEST_TIMEOUT)")
	f.DurationVar(&opts.StatementTimeout, "statement-timeout", envDuration("PLATFORMAPI_STATEMENT_TIMEOUT", defaultStatementTimeout),
		"PostgreSQL statement_timeout of the server's connections, lock waits included; 0: the database's own "+
			"(env PLATFORMAPI_STATEMENT_TIMEOUT)")
	f.DurationVar(&so.AuthRecheck, "auth-recheck", api.DefaultRecheck, "longest a replica trusts a cached credential, and how often it reloads its view of live AI gateway keys (the bound while the change feed is down)")
	f.StringVar(&so.PrometheusURL, "prometheus-url", os.Getenv("PLATFORMAPI_PROMETHEUS_URL"), "Prometheus base URL for AI node live values (env PLATFORMAPI_PROMETHEUS_URL); empty: simulated")
	f.DurationVar(&so.ReconcileInterval, "reconcile-interval", envDuration("PLATFORMAPI_RECONCILE_INTERVAL",
		bunstore.DefaultReconcileInterval), "how often node caches are compared with what the node agents report "+
		"(env PLATFORMAPI_RECONCILE_INTERVAL)")
	portalFlags(cmd, &so.Portal, &secretFile)
	return cmd
}

// portalFlags declares the people's portal's flags of serve.
func portalFlags(cmd *cobra.Command, o *PortalOptions, secretFile *string) {
	f := cmd.Flags()
	f.StringVar(&o.OIDCIssuer, "oidc-issuer", os.Getenv("PLATFORMAPI_OIDC_ISSUER"),
		"OpenID provider's issuer URL the portal signs people in with (env PLATFORMAPI_OIDC_ISSUER); empty: no sign-in")
	f.StringVar(&o.OIDCClientID, "oidc-client-id", os.Getenv("PLATFORMAPI_OIDC_CLIENT_ID"),
		"the portal's client id at the OpenID provider (env PLATFORMAPI_OIDC_CLIENT_ID)")
	f.StringVar(secretFile, "oidc-client-secret-file", os.Getenv("PLATFORMAPI_OIDC_CLIENT_SECRET_FILE"),
		"file holding the portal's client secret (env PLATFORMAPI_OIDC_CLIENT_SECRET_FILE; env "+
			"PLATFORMAPI_OIDC_CLIENT_SECRET wins)")
	f.StringVar(&o.URL, "portal-url", os.Getenv("PLATFORMAPI_PORTAL_URL"),
		"external base URL of the portal, e.g. https://platform.example.com (env PLATFORMAPI_PORTAL_URL); "+
			"empty: each request's scheme and host")
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
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			applied, err := bunstore.Migrate(c.Context(), m.db)
			if err != nil {
				return err
			}
			return PrintJSON(out, map[string]any{"applied": nonNil(applied)})
		})})
	cmd.AddCommand(&cobra.Command{Use: "status", Short: "List migrations and whether each is applied", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			st, err := bunstore.MigrationStatus(c.Context(), m.db)
			if err != nil {
				return err
			}
			return PrintJSON(out, map[string]any{"migrations": st})
		})})
	return cmd
}

// withMain opens the database for a command and closes it afterwards.
func withMain(opts *Options, run func(*cobra.Command, *Main, []string) error) func(*cobra.Command, []string) error {
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

func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, p := range splitList(s) {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, err
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

// envDuration reads a duration from the environment variable name, else
// def; checkEnvDurations refuses a value that does not parse.
func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// checkEnvDurations reports a duration environment variable that is set but
// does not parse (envDuration would silently use the default).
func checkEnvDurations(names ...string) error {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			if _, err := time.ParseDuration(v); err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
		}
	}
	return nil
}

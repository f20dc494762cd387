package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"platformapi/resources/nodeagent"
)

// nodeAgentEnv prefixes the environment variable of each node-agent flag.
const nodeAgentEnv = "PLATFORMAPI_NODE_AGENT_"

// nodeAgentDrain is how long a stopping node agent lets its requests
// finish; they answer at once (a copy runs in the background).
const nodeAgentDrain = 10 * time.Second

// NodeAgentOptions configure `node-agent`.
type NodeAgentOptions struct {
	Addr              string
	StoreRoot         string
	CacheRoot         string
	KeyFile           string
	MaxCacheBytes     int64
	MaxCopies         int
	MaxBytesPerSecond int64
	TLSCertFile       string // with TLSKeyFile: serve HTTPS, renewed files picked up
	TLSKeyFile        string
}

func nodeAgentCommand(opts *Options) *cobra.Command {
	var o NodeAgentOptions
	cmd := &cobra.Command{
		Use:   "node-agent",
		Short: "Copy model weights from the central store into this GPU node's cache, on the server's request",
		Long: "Serves the node agent protocol (/v1, node key required; /healthz) on --addr. Every flag also " +
			"reads " + nodeAgentEnv + "<FLAG> (e.g. " + nodeAgentEnv + "CACHE_ROOT); the flag wins.",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{globalFlagsTaken: "log-level"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return RunNodeAgent(cmd.Context(), o, opts.Logger)
		},
	}
	cmd.SetHelpFunc(nodeAgentHelp)
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", ":9441", "listen address")
	f.StringVar(&o.StoreRoot, "store-root", "", "the central model store as mounted on this node; only ever "+
		"read (a model's central copy is <store-root>/<nas_path>)")
	f.StringVar(&o.CacheRoot, "cache-root", "", "the node's model cache, the only place the agent writes or "+
		"deletes; the cache of org/name is <cache-root>/org/name")
	f.StringVar(&o.KeyFile, "key-file", "", "file holding this node's key (platformapi portal node-key); "+
		"read again (at most once a second) when it changes, so a rotation needs no restart")
	f.Int64Var(&o.MaxCacheBytes, "max-cache-bytes", 0, "most bytes the cache root may hold (0: what the file "+
		"system has free)")
	f.IntVar(&o.MaxCopies, "max-copies", nodeagent.DefaultMaxCopies, "copies running at once (0: the default); more wait their turn")
	f.Int64Var(&o.MaxBytesPerSecond, "max-copy-bytes-per-second", 0,
		"bytes per second all copies may read together (0: no limit)")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serve HTTPS with this certificate (PEM); renewed files "+
		"are picked up without a restart")
	f.StringVar(&o.TLSKeyFile, "tls-key-file", "", "the certificate's private key (PEM)")
	return cmd
}

// RunNodeAgent serves a node agent until ctx ends, then stops accepting
// requests, stops its copies (their verified files stay for a resume) and
// returns.
func RunNodeAgent(ctx context.Context, o NodeAgentOptions, log *slog.Logger) error {
	if err := requireAddr(o.Addr, ":9441", nodeAgentEnv+"ADDR"); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	agent, err := nodeagent.New(nodeagent.Config{StoreRoot: o.StoreRoot, CacheRoot: o.CacheRoot,
		KeyFile: o.KeyFile, MaxCacheBytes: o.MaxCacheBytes, MaxCopies: o.MaxCopies,
		MaxBytesPerSecond: o.MaxBytesPerSecond, Logger: log})
	if err != nil {
		return err
	}
	defer agent.Close()
	tlsConfig, err := serverTLS(o.TLSCertFile, o.TLSKeyFile, log)
	if err != nil {
		return err
	}
	ln, err := listenTCP(o.Addr, "--addr")
	if err != nil {
		return err
	}
	log.Info("node agent serving", "addr", ln.Addr().String(), "tls", tlsConfig != nil,
		"store_root", o.StoreRoot, "cache_root", o.CacheRoot, "max_cache_bytes", o.MaxCacheBytes,
		"max_copies", agent.MaxCopies(), "max_copy_bytes_per_second", o.MaxBytesPerSecond)
	hs := newHTTPServer(agent.Handler(), tlsConfig, time.Minute) // its answers are small
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	if err := serveUntilDone(ctx, hs, ln, nodeAgentDrain, log); err != nil {
		return err
	}
	log.Info("node agent stopped")
	return nil
}

// check refuses a required flag left empty and a negative limit, naming
// the flag and its variable (the agent's own refusals name neither, and
// without --key-file it took the missing key for a malformed one).
func (o NodeAgentOptions) check() error {
	for _, f := range []struct {
		name, value, what string
	}{
		{"store-root", o.StoreRoot, "the central model store as mounted on this node"},
		{"cache-root", o.CacheRoot, "the node's model cache"},
		{"key-file", o.KeyFile, "the file holding this node's key (platformapi portal node-key prints it)"},
	} {
		if strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("--%s (%s) is required: %s", f.name, nodeAgentEnv+snakeName(f.name), f.what)
		}
	}
	for _, f := range []struct {
		name  string
		value int64
		zero  string
	}{
		{"max-cache-bytes", o.MaxCacheBytes, "no cap"},
		{"max-copies", int64(o.MaxCopies), "the default"},
		{"max-copy-bytes-per-second", o.MaxBytesPerSecond, "no limit"},
	} {
		if f.value < 0 {
			return fmt.Errorf("--%s (%s) is %d: it must not be negative (0: %s)", f.name,
				nodeAgentEnv+snakeName(f.name), f.value, f.zero)
		}
	}
	return nil
}

// nodeAgentHelp is node-agent's --help: of the global flags only
// --log-level, which the agent reads, with the agent's variables for it;
// the server's (--database-url, --redis-url, --data-dir, …) mean nothing
// to it and are left out. The root's flags are put back as they were once
// the page is written, so the command tree's other help pages are unchanged.
func nodeAgentHelp(c *cobra.Command, args []string) {
	root := c.Root()
	type shown struct {
		hidden bool
		usage  string
	}
	was := map[*pflag.Flag]shown{}
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		was[f] = shown{f.Hidden, f.Usage}
		if f.Name != "log-level" {
			f.Hidden = true
			return
		}
		f.Usage = strings.TrimSuffix(f.Usage, envSuffix(envNames(root, f))) + envSuffix(envNames(c, f))
	})
	defer func() {
		for f, s := range was {
			f.Hidden, f.Usage = s.hidden, s.usage
		}
	}()
	root.HelpFunc()(c, args)
}

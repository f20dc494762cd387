package app

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"platformapi/resources/nodeagent"
)

// nodeAgentEnv prefixes the environment variable of each node-agent flag.
const nodeAgentEnv = "PLATFORMAPI_NODE_AGENT_"

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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkEnvInts(nodeAgentEnv+"MAX_CACHE_BYTES", nodeAgentEnv+"MAX_COPIES",
				nodeAgentEnv+"MAX_COPY_BYTES_PER_SECOND"); err != nil {
				return err
			}
			return RunNodeAgent(cmd.Context(), o, opts.Logger)
		},
	}
	f := cmd.Flags()
	env := func(flag string) string { return os.Getenv(nodeAgentEnv + flag) }
	f.StringVar(&o.Addr, "addr", cmp.Or(env("ADDR"), ":9441"), "listen address")
	f.StringVar(&o.StoreRoot, "store-root", env("STORE_ROOT"), "the central model store as mounted on "+
		"this node; only read (a model's central copy is <store-root>/<nas_path>)")
	f.StringVar(&o.CacheRoot, "cache-root", env("CACHE_ROOT"),
		"the node's model cache; the cache of org/name is <cache-root>/org/name")
	f.StringVar(&o.KeyFile, "key-file", env("KEY_FILE"),
		"file holding this node's key (platformapi portal node-key); read again when it changes")
	f.Int64Var(&o.MaxCacheBytes, "max-cache-bytes", envInt(nodeAgentEnv+"MAX_CACHE_BYTES", 0),
		"most bytes the cache root may hold (0: what the file system has free)")
	f.IntVar(&o.MaxCopies, "max-copies", int(envInt(nodeAgentEnv+"MAX_COPIES", nodeagent.DefaultMaxCopies)),
		"copies running at once; more wait their turn")
	f.Int64Var(&o.MaxBytesPerSecond, "max-copy-bytes-per-second",
		envInt(nodeAgentEnv+"MAX_COPY_BYTES_PER_SECOND", 0),
		"bytes per second all copies may read together (0: no limit)")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", env("TLS_CERT_FILE"), "serve HTTPS with this certificate (PEM)")
	f.StringVar(&o.TLSKeyFile, "tls-key-file", env("TLS_KEY_FILE"), "the certificate's private key (PEM)")
	return cmd
}

// RunNodeAgent serves a node agent until ctx ends, then stops accepting
// requests, stops its copies (their verified files stay for a resume) and
// returns.
func RunNodeAgent(ctx context.Context, o NodeAgentOptions, log *slog.Logger) error {
	agent, err := nodeagent.New(nodeagent.Config{StoreRoot: o.StoreRoot, CacheRoot: o.CacheRoot,
		KeyFile: o.KeyFile, MaxCacheBytes: o.MaxCacheBytes, MaxCopies: o.MaxCopies,
		MaxBytesPerSecond: o.MaxBytesPerSecond, Logger: log})
	if err != nil {
		return err
	}
	defer agent.Close()
	tlsConfig, err := agentTLS(o, log)
	if err != nil {
		return err
	}
	ln, err := listenTCP(o.Addr, "--addr")
	if err != nil {
		return err
	}
	log.Info("node agent serving", "addr", ln.Addr().String(), "tls", tlsConfig != nil,
		"store_root", o.StoreRoot, "cache_root", o.CacheRoot, "max_cache_bytes", o.MaxCacheBytes,
		"max_copies", o.MaxCopies, "max_copy_bytes_per_second", o.MaxBytesPerSecond)
	hs := &http.Server{Handler: agent.Handler(), ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 2 * time.Minute, TLSConfig: tlsConfig,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if err := serveUntilDone(ctx, hs, ln); err != nil {
		return err
	}
	log.Info("node agent stopped")
	return nil
}

// serveUntilDone serves hs on ln (TLS when hs has a TLS configuration)
// until ctx ends, then drains requests for up to 10 seconds.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// agentTLS is the TLS configuration of --tls-cert-file/--tls-key-file
// (nil: plain HTTP); the pair is loaded now and again whenever a file
// changes.
func agentTLS(o NodeAgentOptions, log *slog.Logger) (*tls.Config, error) {
	if o.TLSCertFile == "" && o.TLSKeyFile == "" {
		return nil, nil
	}
	if o.TLSCertFile == "" || o.TLSKeyFile == "" {
		return nil, errors.New("--tls-cert-file and --tls-key-file go together")
	}
	kp := &keyPair{certFile: o.TLSCertFile, keyFile: o.TLSKeyFile, log: log}
	if _, err := kp.certificate(nil); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.certificate}, nil
}

// envInt reads an integer from the environment variable name, else def;
// checkEnvInts refuses a value that does not parse.
func envInt(name string, def int64) int64 {
	if n, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return n
	}
	return def
}

// checkEnvInts reports an integer environment variable that is set but
// does not parse (envInt would silently use the default).
func checkEnvInts(names ...string) error {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return fmt.Errorf("%s: %q is not a whole number", n, v)
			}
		}
	}
	return nil
}

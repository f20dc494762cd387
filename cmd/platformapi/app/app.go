// Package app is the platformapi binary's wiring and command line: the
// database (or the embedded cluster), the HTTP server with MCP, the demo
// world, the portal commands and the eval runner's embedded server. It is a
// package of its own, not main, so the evaluation suites' tests can start
// the very same server in-process.
package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"platformapi/api/sharedcache"
	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/monitoringsim"
	"platformapi/resources/nodeagent"
	"platformapi/resources/tracing"
)

// Options is the configuration every command shares.
type Options struct {
	DatabaseURL     string // empty: the embedded cluster under DataDir
	DataDir         string // home of the embedded cluster and its pepper
	TokenPepperFile string // file holding the token pepper
	// LicencePublicKey is the vendor's Ed25519 public key (raw 32 bytes in
	// standard base64) licence bundles are verified against.
	LicencePublicKey string
	Logger           *slog.Logger
	// FrozenClock, when set, stops every clock of the command at that
	// instant (--frozen-clock): the store's and the API's, and on `serve`
	// and `eval` the database's too (see bunstore.FreezeClock).
	FrozenClock time.Time
	// StatementTimeout is PostgreSQL's statement_timeout on the pool's
	// connections (0: the server's own); migrations run without it.
	StatementTimeout time.Duration
	RedisURL         string // shared cache of the replicas; empty: none
	// Tracing, when set, is the tracing of the command instead of the one
	// the OTEL_* environment configures (tests record spans in memory).
	Tracing *tracing.Tracing
	// stopLogs writes out what the logger's buffer holds (serve; nil when
	// the logger writes unbuffered).
	stopLogs func()
}

// Main holds what a command opened: the database (and the embedded cluster
// behind it), the store and the token pepper. Close releases all of it.
type Main struct {
	opts     Options
	dsn      string // the database's DSN (migrations open their own pool)
	embedded *bunstore.Embedded
	db       *bun.DB
	store    *bunstore.Store
	pepper   resources.Pepper
	shared   *sharedcache.Shared  // nil without --redis-url
	feed     *bunstore.ChangeFeed // the change feed without Redis: PostgreSQL LISTEN/NOTIFY
	stopFeed func()               // stops the running change feed (Redis or PostgreSQL) and waits
	// clock is the database's frozen clock while one is installed: with
	// --frozen-clock, and while the demo history is built (holdDemoClock).
	clock    atomic.Pointer[bunstore.FrozenClock]
	demoBase time.Time          // the instant the demo history leads up to
	sim      *monitoringsim.Sim // the simulated fleet; nil with Prometheus
	fleet    *nodeagent.Fleet   // the node agents of the roster
	demo     *demoFleet         // serve --demo: the in-process agents of the demo fleet
	// stopGateway stops keeping the view of live gateway keys, writing the
	// keys' last uses once more (after the HTTP server drained).
	stopGateway func()
	tracing     *tracing.Tracing // nil: off (no OTLP endpoint configured)
	// stopping is closed when serve is stopping but still serving
	// (--stop-delay): /readyz answers 503; nil without a delay.
	stopping chan struct{}
}

// Open connects to the configured database, starting the embedded cluster
// when no URL is given, loads the token pepper and starts tracing when the
// environment configures it (see tracing.FromEnv).
func Open(ctx context.Context, opts Options) (*Main, error) {
	m := &Main{opts: opts, tracing: opts.Tracing}
	if m.tracing == nil {
		var err error
		if m.tracing, err = tracing.FromEnv(ctx, os.Getenv, readBuildInfo().Version); err != nil {
			return nil, err
		}
	}
	m.tracing.LogErrors(opts.Logger)
	dsn := opts.DatabaseURL
	if dsn == "" {
		e, dsn2, err := openEmbedded(ctx, opts)
		if err != nil {
			return nil, err
		}
		m.embedded, dsn = e, dsn2
	}
	db, err := bunstore.Open(ctx, dsn, bunstore.WithStatementTimeout(opts.StatementTimeout))
	if err != nil {
		m.Close()
		return nil, err
	}
	m.dsn, m.db, m.store = dsn, db, bunstore.NewStore(db)
	m.store.SetClock(m.now)
	m.store.SetTracing(m.tracing)
	if m.pepper, err = loadPepper(opts, m.embedded != nil); err != nil {
		m.Close()
		return nil, err
	}
	m.fleet = nodeagent.NewFleet(m.store, nodeagent.NewClient(m.tracing.Client()), m.pepper)
	if opts.RedisURL != "" {
		if m.shared, err = sharedcache.New(sharedcache.Options{URL: opts.RedisURL, Logger: opts.Logger,
			Installation: m.installationID}); err != nil {
			m.Close()
			return nil, err
		}
		m.store.SetChangePublisher(m.shared)
		return m, nil
	}
	if m.feed, err = bunstore.NewChangeFeed(dsn, db, opts.Logger); err != nil {
		m.Close()
		return nil, err
	}
	m.store.SetChangePublisher(m.feed)
	return m, nil
}

// installationID is the id the installation's database holds (made by its
// first migration): the scope of its replicas' names in Redis.
func (m *Main) installationID(ctx context.Context) (string, error) {
	st, err := m.store.StoredLicence(ctx)
	return st.InstallationID, err
}

// openEmbedded attaches to the private cluster when a running server holds
// it (so portal commands work beside `serve`), else starts it; then makes
// sure its platformapi database exists.
func openEmbedded(ctx context.Context, opts Options) (*bunstore.Embedded, string, error) {
	e, running, err := bunstore.AttachEmbedded(opts.DataDir, opts.Logger)
	if err == nil && !running {
		e, err = bunstore.StartEmbedded(ctx, opts.DataDir, opts.Logger)
	}
	if err != nil {
		return nil, "", err
	}
	admin, err := bunstore.Open(ctx, e.DSN("postgres"))
	if err != nil {
		_ = e.Stop()
		return nil, "", err
	}
	defer admin.Close()
	var exists bool
	if err := admin.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'platformapi')").Scan(ctx, &exists); err != nil {
		_ = e.Stop()
		return nil, "", err
	}
	if !exists {
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE platformapi"); err != nil {
			_ = e.Stop()
			return nil, "", err
		}
	}
	return e, e.DSN("platformapi"), nil
}

// loadPepper reads the token pepper: env PLATFORMAPI_TOKEN_PEPPER, else the
// --token-pepper-file, else (embedded mode only) a pepper generated once
// into the data dir. An external database without one leaves tokens
// unconfigured (503 api_tokens_unconfigured); one given but too short is
// refused.
func loadPepper(opts Options, embedded bool) (resources.Pepper, error) {
	if v := os.Getenv("PLATFORMAPI_TOKEN_PEPPER"); v != "" {
		return checkPepper(resources.Pepper(v), "PLATFORMAPI_TOKEN_PEPPER")
	}
	path := opts.TokenPepperFile
	if path == "" && embedded {
		path = filepath.Join(opts.DataDir, "token-pepper")
		if err := ensurePepperFile(path); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil && opts.TokenPepperFile != "" {
		return nil, fmt.Errorf("--token-pepper-file (PLATFORMAPI_TOKEN_PEPPER_FILE): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read token pepper: %w", err)
	}
	return checkPepper(resources.Pepper(strings.TrimSpace(string(b))), "--token-pepper-file "+path)
}

// checkPepper refuses a pepper that was given but is too short to be one:
// taken for none, it left every authenticated request 503 while the log
// said no pepper was configured.
func checkPepper(p resources.Pepper, from string) (resources.Pepper, error) {
	if !p.Configured() {
		return nil, fmt.Errorf("%s: the token pepper must be at least 16 characters "+
			"(e.g. from `openssl rand -base64 32`)", from)
	}
	return p, nil
}

func ensurePepperFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create token pepper: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	_, err = io.WriteString(f, base64.RawStdEncoding.EncodeToString(b)+"\n")
	return errors.Join(err, f.Close())
}

// now is the clock of the command, the store's and the API's: the
// database's frozen clock while one is installed, else --frozen-clock's
// instant, else the real clock.
func (m *Main) now() time.Time {
	switch c := m.clock.Load(); {
	case c != nil:
		return c.Now()
	case !m.opts.FrozenClock.IsZero():
		return m.opts.FrozenClock
	}
	return time.Now()
}

// freezeDatabaseClock installs the frozen clock in the database when
// --frozen-clock is set (serve and eval only).
func (m *Main) freezeDatabaseClock(ctx context.Context) error {
	if m.opts.FrozenClock.IsZero() {
		return nil
	}
	c, err := bunstore.FreezeClock(ctx, m.db, m.opts.FrozenClock)
	if err != nil {
		return err
	}
	m.clock.Store(c)
	return nil
}

// Close writes the gateway keys' last uses, stops the change feed (waiting
// for it), closes the database, stops the embedded cluster, if any, and
// exports the spans still buffered.
func (m *Main) Close() {
	defer m.stopTracing()
	if m.stopGateway != nil {
		m.stopGateway()
	}
	if m.demo != nil {
		m.demo.close()
	}
	if m.stopFeed != nil {
		m.stopFeed()
	}
	if m.shared != nil {
		_ = m.shared.Close()
	}
	if m.db != nil {
		_ = m.db.Close()
	}
	if m.embedded != nil {
		if err := m.embedded.Stop(); err != nil {
			m.opts.Logger.Error("stopping embedded postgres", "error", err)
		}
	}
}

// Portal is the portal-action service over this database.
func (m *Main) Portal() resources.Portal {
	return bunstore.TokenMinter{Store: m.store, Pepper: m.pepper}
}

// migrate applies the schema migrations over a pool of its own without the
// statement timeout (a migration may rightly take longer than a request).
func (m *Main) migrate(ctx context.Context) error {
	if m.opts.StatementTimeout <= 0 {
		_, err := bunstore.Migrate(ctx, m.db)
		return err
	}
	db, err := bunstore.Open(ctx, m.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = bunstore.Migrate(ctx, db)
	return err
}

// stopTracing exports the spans still buffered (for at most 5 seconds) and
// stops the exporter; nothing when tracing is off.
func (m *Main) stopTracing() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.tracing.Shutdown(ctx); err != nil {
		m.opts.Logger.Warn("exporting the last spans", "error", err)
	}
}

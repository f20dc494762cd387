package main

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

	"github.com/uptrace/bun"

	"platformapi/bunstore"
	"platformapi/resources"
)

// Options is the configuration every command shares.
type Options struct {
	DatabaseURL     string // empty: the embedded cluster under DataDir
	DataDir         string // home of the embedded cluster and its pepper
	TokenPepperFile string // file holding the token pepper
	Logger          *slog.Logger
}

// Main holds what a command opened: the database (and the embedded cluster
// behind it), the store and the token pepper. Close releases all of it.
type Main struct {
	opts     Options
	embedded *bunstore.Embedded
	db       *bun.DB
	store    *bunstore.Store
	pepper   resources.Pepper
}

// Open connects to the configured database, starting the embedded cluster
// when no URL is given, and loads the token pepper.
func Open(ctx context.Context, opts Options) (*Main, error) {
	m := &Main{opts: opts}
	dsn := opts.DatabaseURL
	if dsn == "" {
		e, dsn2, err := openEmbedded(ctx, opts)
		if err != nil {
			return nil, err
		}
		m.embedded, dsn = e, dsn2
	}
	db, err := bunstore.Open(ctx, dsn)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.db, m.store = db, bunstore.NewStore(db)
	if m.pepper, err = loadPepper(opts, m.embedded != nil); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
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
// unconfigured (503 api_tokens_unconfigured).
func loadPepper(opts Options, embedded bool) (resources.Pepper, error) {
	if v := os.Getenv("PLATFORMAPI_TOKEN_PEPPER"); v != "" {
		return resources.Pepper(v), nil
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
	if err != nil {
		return nil, fmt.Errorf("read token pepper: %w", err)
	}
	return resources.Pepper(strings.TrimSpace(string(b))), nil
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

// Close closes the database and stops the embedded cluster, if any.
func (m *Main) Close() {
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

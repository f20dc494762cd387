package app

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"platformapi/bunstore/pgtest"
)

func TestOpen_StatementTimeoutOnThePoolNotOnMigrations(t *testing.T) {
	m, err := Open(t.Context(), Options{DatabaseURL: pgtest.DSN(t), StatementTimeout: 250 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got string
	if err := m.db.NewRaw("SHOW statement_timeout").Scan(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if got != "250ms" {
		t.Fatalf("statement_timeout %q, want 250ms", got)
	}
	if err := m.migrate(t.Context()); err != nil {
		t.Fatalf("migrate beside a statement timeout: %v", err)
	}
}

func TestServe_InvalidTimeoutEnvironment_Refused(t *testing.T) {
	t.Setenv("PLATFORMAPI_STATEMENT_TIMEOUT", "ten seconds")
	root := NewRootCommand(io.Discard, io.Discard)
	root.SetArgs([]string{"serve"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "PLATFORMAPI_STATEMENT_TIMEOUT") {
		t.Fatalf("error %v", err)
	}
}

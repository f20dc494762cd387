package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of checkNotMigrated

	"platformapi/bunstore/pgtest"
	"platformapi/resources/testkit"
)

// servedSerial is the serial of the certificate a new TLS connection to
// addr is served (nil: no handshake).
func servedSerial(addr string) *big.Int {
	// Only the served certificate's serial is read.
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
	if err != nil {
		return nil
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

// TestServe_TLS_HealthzOverHTTPSRenewedCertificateServedWithoutRestart:
// `serve --tls-cert-file` (the key from PLATFORMAPI_TLS_KEY_FILE) answers
// HTTPS on --addr and --metrics-addr to a client trusting the certificate,
// and a renewed pair of files is served to the next new connection.
func TestServe_TLS_HealthzOverHTTPSRenewedCertificateServedWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeSelfSigned(t, certFile, keyFile, 1)
	t.Setenv("PLATFORMAPI_TLS_KEY_FILE", keyFile)
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := NewRootCommand(io.Discard, io.Discard)
		root.SetArgs([]string{"--database-url", pgtest.DSN(t), "--log-level", "error", "serve", "--addr", addr,
			"--metrics-addr", metricsAddr, "--tls-cert-file", certFile})
		done <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	roots := x509.NewCertPool()
	roots.AddCert(first)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for _, url := range []string{"https://" + addr + "/healthz", "https://" + metricsAddr + "/metrics"} {
		testkit.Eventually(t, 30*time.Second, url+" answers 200 over TLS", func() bool {
			res, err := client.Get(url)
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	}
	renewed := writeSelfSigned(t, certFile, keyFile, 2)
	testkit.Eventually(t, 10*time.Second, "the renewed certificate served", func() bool {
		s := servedSerial(addr)
		return s != nil && s.Cmp(renewed.SerialNumber) == 0
	})
}

// TestServe_TLS_BadFileRefusedNamingItsFlagAndFileBeforeMigrating: a TLS
// certificate or key that does not load stops `serve` with an error naming
// the flag and the file at fault (a bad key never blamed on the
// certificate), before the database is touched.
func TestServe_TLS_BadFileRefusedNamingItsFlagAndFileBeforeMigrating(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeSelfSigned(t, certFile, keyFile, 1)
	otherCert, otherKey := filepath.Join(dir, "other.crt"), filepath.Join(dir, "other.key")
	writeSelfSigned(t, otherCert, otherKey, 2)
	garbage, missing := filepath.Join(dir, "garbage.pem"), filepath.Join(dir, "missing.pem")
	mustWrite(t, garbage, []byte("not PEM\n"))
	for _, tc := range []struct{ name, cert, key, want string }{
		{"key not PEM", certFile, garbage, "--tls-key-file " + garbage},
		{"key missing", certFile, missing, "--tls-key-file " + missing},
		{"key of another certificate", certFile, otherKey, "--tls-key-file " + otherKey},
		{"certificate not PEM", garbage, keyFile, "--tls-cert-file " + garbage},
		{"certificate missing", missing, keyFile, "--tls-cert-file " + missing},
		{"key given as certificate", keyFile, certFile, "--tls-cert-file " + keyFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.EmptyDSN(t)
			root := NewRootCommand(io.Discard, io.Discard)
			root.SetArgs([]string{"--database-url", dsn, "--log-level", "error", "serve", "--addr",
				freeAddr(t), "--tls-cert-file", tc.cert, "--tls-key-file", tc.key})
			err := root.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve: %v; want an error naming %q", err, tc.want)
			}
			checkNotMigrated(t, dsn)
		})
	}
}

// checkNotMigrated fails when the database at dsn holds the schema.
func checkNotMigrated(t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the database holds %d tables: serve migrated before refusing to start", n)
	}
}

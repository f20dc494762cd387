package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"testing"
	"time"

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

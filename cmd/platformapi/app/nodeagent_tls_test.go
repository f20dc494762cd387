package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/testkit"
)

// writeSelfSigned writes a certificate for 127.0.0.1 with serial and its
// key, and answers the certificate.
func writeSelfSigned(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "gpu-1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	mustWrite(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// TestNodeAgent_TLS_ClientTrustsCertRenewedFilesServed serves the agent
// over HTTPS: the client reaches it through an https agent URL, and a
// renewed certificate is served without a restart.
func TestNodeAgent_TLS_ClientTrustsCertRenewedFilesServed(t *testing.T) {
	d := newAgentDirs(t)
	certFile, keyFile := filepath.Join(t.TempDir(), "tls.crt"), filepath.Join(t.TempDir(), "tls.key")
	first := writeSelfSigned(t, certFile, keyFile, 1)
	o := NodeAgentOptions{Addr: freeAddr(t), StoreRoot: d.store, CacheRoot: d.cache, KeyFile: d.keyFile,
		TLSCertFile: certFile, TLSKeyFile: keyFile}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunNodeAgent(ctx, o, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() { stop(); <-done })

	roots := x509.NewCertPool()
	roots.AddCert(first)
	client := nodeagent.NewClient(&http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}})
	ep := resources.AgentEndpoint{Hostname: "gpu-1", URL: "https://" + o.Addr, Key: d.key}
	testkit.Eventually(t, 10*time.Second, "the agent answers over TLS", func() bool {
		_, err := client.Report(ctx, ep)
		return err == nil
	})
	renewed := writeSelfSigned(t, certFile, keyFile, 2)
	testkit.Eventually(t, 10*time.Second, "the renewed certificate served", func() bool {
		// Only the served certificate's serial is read.
		conn, err := tls.Dial("tcp", o.Addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
		if err != nil {
			return false
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(renewed.SerialNumber) == 0
	})
}

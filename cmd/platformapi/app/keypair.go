package app

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"
)

// keyPair serves a TLS certificate from a pair of PEM files, loading it
// again (at most once a second) when either file's modification time or
// size changes, so a renewed certificate needs no restart. A renewed pair that
// does not load is logged and the previous one kept.
type keyPair struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]fileStamp // the loaded pair's files
	checked time.Time
}

// certificate is a tls.Config GetCertificate.
func (k *keyPair) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert != nil && time.Since(k.checked) < time.Second {
		return k.cert, nil
	}
	k.checked = time.Now()
	stamp, err := k.stamps()
	if err == nil && k.cert != nil && stamp == k.stamp {
		return k.cert, nil
	}
	var cert tls.Certificate
	if err == nil {
		cert, err = loadKeyPair(k.certFile, k.keyFile)
	}
	switch {
	case err != nil && k.cert == nil:
		return nil, err
	case err != nil:
		k.log.Error("the renewed TLS certificate does not load: still serving the previous one", "error", err)
	default:
		k.cert, k.stamp = &cert, stamp
	}
	return k.cert, nil
}

// fileStamp tells a file's versions apart.
type fileStamp struct {
	mod  time.Time
	size int64
}

// stamps are the files' modification times and sizes.
func (k *keyPair) stamps() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, f := range []string{k.certFile, k.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return out, fileError(i, f, err)
		}
		out[i] = fileStamp{fi.ModTime(), fi.Size()}
	}
	return out, nil
}

// tlsFlags are the flags naming the certificate and the key file.
var tlsFlags = [2]string{"--tls-cert-file", "--tls-key-file"}

// fileError is err of reading file f of tlsFlags[i], naming the flag and the
// file once.
func fileError(i int, f string, err error) error {
	return fmt.Errorf("%s %s: %w", tlsFlags[i], f, withoutPath(err))
}

// withoutPath is err of reading or opening a file without the path, for
// a message that names the file its own way.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadKeyPair loads the pair like tls.LoadX509KeyPair, its error naming the
// flag and the file at fault: the certificate file when it holds no
// certificate that parses, else the key file (no key, or not this
// certificate's).
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	var pems [2][]byte
	for i, f := range []string{certFile, keyFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			return tls.Certificate{}, fileError(i, f, err)
		}
		pems[i] = b
	}
	if err := firstCertificate(pems[0]); err != nil {
		return tls.Certificate{}, fmt.Errorf("%s %s: %w", tlsFlags[0], certFile, err)
	}
	cert, err := tls.X509KeyPair(pems[0], pems[1])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s %s (the key of %s): %w", tlsFlags[1], keyFile, certFile, err)
	}
	return cert, nil
}

// firstCertificate checks that the PEM data's first CERTIFICATE block
// parses as an X.509 certificate.
func firstCertificate(data []byte) error {
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return errors.New("no PEM block of type CERTIFICATE (is it the key, or not PEM?)")
		}
		if b.Type == "CERTIFICATE" {
			_, err := x509.ParseCertificate(b.Bytes)
			return err
		}
	}
}

// serverTLS is the TLS configuration of --tls-cert-file/--tls-key-file,
// the server's and the node agent's (nil: plain HTTP); the pair is loaded
// now and again whenever a file changes (keyPair).
func serverTLS(certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("--tls-cert-file and --tls-key-file go together")
	}
	kp := &keyPair{certFile: certFile, keyFile: keyFile, log: log}
	if _, err := kp.certificate(nil); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.certificate}, nil
}

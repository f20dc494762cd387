package app

import (
	"crypto/tls"
	"errors"
	"fmt"
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
		cert, err = tls.LoadX509KeyPair(k.certFile, k.keyFile)
	}
	switch {
	case err != nil && k.cert == nil:
		return nil, fmt.Errorf("load the TLS certificate %s: %w", k.certFile, err)
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
			return out, err
		}
		out[i] = fileStamp{fi.ModTime(), fi.Size()}
	}
	return out, nil
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

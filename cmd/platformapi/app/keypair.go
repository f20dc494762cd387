package app

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// keyPair serves a TLS certificate from a pair of PEM files, loading it
// again (at most once a second) when either file's modification time
// changes, so a renewed certificate needs no restart. A renewed pair that
// does not load is logged and the previous one kept.
type keyPair struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]time.Time // modification times of the loaded pair
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
	stamp, err := k.modTimes()
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

// modTimes are the files' modification times.
func (k *keyPair) modTimes() ([2]time.Time, error) {
	var out [2]time.Time
	for i, f := range []string{k.certFile, k.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return out, err
		}
		out[i] = fi.ModTime()
	}
	return out, nil
}

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
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"platformapi/api"
)

// listeners are serve's addresses, taken before anything changes (a taken
// address then leaves the database unmigrated and prints no token).
type listeners struct {
	api, metrics net.Listener // metrics: nil without --metrics-addr
}

// bind takes o.Addr and, when set, o.MetricsAddr.
func bind(o ServeOptions) (*listeners, error) {
	var l listeners
	if o.MetricsAddr != "" {
		ln, err := listenTCP(o.MetricsAddr, "--metrics-addr")
		if err != nil {
			return nil, err
		}
		l.metrics = ln
	}
	ln, err := listenTCP(o.Addr, "--addr")
	if err != nil {
		l.close()
		return nil, err
	}
	l.api = ln
	return &l, nil
}

// close releases the addresses not served (serving closes its own).
func (l *listeners) close() {
	for _, ln := range []net.Listener{l.api, l.metrics} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// listen serves h on l.api, and the metrics of reg on l.metrics when set,
// until ctx ends (over TLS when tlsConfig is set: --tls-cert-file).
func (m *Main) listen(ctx context.Context, o ServeOptions, l *listeners, h http.Handler,
	reg *prometheus.Registry, tlsConfig *tls.Config) error {
	if l.metrics != nil {
		gated := api.NetworkGate(o.Networks, api.MetricsHandler(reg))
		metrics := api.NewClientAddrs(o.TrustedProxies).Middleware(gated)
		go func() {
			if err := m.serve(ctx, l.metrics, metrics, tlsConfig, o); err != nil {
				m.opts.Logger.Error("metrics listener", "addr", o.MetricsAddr, "error", err)
			}
		}()
	}
	m.logWhereServed(ctx, o, l.api.Addr().String())
	return m.serve(ctx, l.api, h, tlsConfig, o)
}

// requireAddr refuses an empty --addr (a unit passing --addr=$VAR with the
// variable unset), which would listen on every interface at a port of the
// kernel's choosing; ":0" asks for that knowingly. def and env are the
// flag's default and variable, for the message.
func requireAddr(addr, def, env string) error {
	if strings.TrimSpace(addr) != "" {
		return nil
	}
	return fmt.Errorf("--addr is empty: give the address to listen on, e.g. %s (the default when "+
		"neither it nor %s is set)", def, env)
}

// listenTCP listens on addr, saying which flag chooses another address
// when it is taken.
func listenTCP(addr, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("listen on %s: %w (another server runs there; choose another address "+
			"with %s)", addr, err, flag)
	case err != nil:
		return nil, fmt.Errorf("listen on %s: %w (check %s)", addr, err, flag)
	}
	return ln, nil
}

// maxHeaderBytes bounds a request's header section on every listener that
// faces the network (API, metrics, node agent): 64 KiB, far above any
// request of the contract (a token, a portal session cookie), where
// net/http's default of 1 MiB let each slow connection hold a megabyte
// while its headers trickle in for ReadHeaderTimeout. Larger: 431.
const maxHeaderBytes = 64 << 10

// serve serves h on ln (over TLS when tlsConfig is set) until ctx ends,
// then drains requests for drainTimeout(o), each answer written within
// answerTimeout(o). Each server gets its own copy of tlsConfig: net/http
// writes its HTTP/2 settings into the server's.
func (m *Main) serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config,
	o ServeOptions) error {
	if tlsConfig != nil {
		tlsConfig = tlsConfig.Clone()
	}
	hs := newHTTPServer(h, tlsConfig, answerTimeout(o))
	if tlsConfig != nil { // handshake failures (scanners, expired client trust) at warn, as JSON
		hs.ErrorLog = slog.NewLogLogger(m.opts.Logger.Handler(), slog.LevelWarn)
	}
	return serveUntilDone(ctx, hs, ln, drainTimeout(o), m.opts.Logger)
}

// newHTTPServer is the server of a listener that faces the network: its
// headers within 10 s and maxHeaderBytes, idle connections closed after 2
// minutes, and each answer written within writeTimeout of its request's
// headers (net/http's WriteTimeout), so a client that stops reading its
// answers cannot hold a connection and its handler for ever.
func newHTTPServer(h http.Handler, tlsConfig *tls.Config, writeTimeout time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		WriteTimeout: writeTimeout, MaxHeaderBytes: maxHeaderBytes, TLSConfig: tlsConfig}
}

// answerTimeout is the write deadline of an answer of the API's listeners:
// twice the request's deadline, so an answer made at the last moment still
// has as long again to reach a slow client.
func answerTimeout(o ServeOptions) time.Duration {
	return 2 * cmp.Or(o.RequestTimeout, api.DefaultRequestTimeout)
}

// drainMargin is how long a stopping server waits, past the request
// deadline, for the answers cut short at it to be written.
const drainMargin = 2 * time.Second

// drainTimeout is how long a stopping server lets the requests in flight
// finish: as long as one may run (--request-timeout), and drainMargin for
// its answer. The stop budgets of deploy/ (TimeoutStopSec=,
// terminationGracePeriodSeconds) leave room for it.
func drainTimeout(o ServeOptions) time.Duration {
	return cmp.Or(o.RequestTimeout, api.DefaultRequestTimeout) + drainMargin
}

// serveUntilDone serves hs on ln (TLS when hs has a TLS configuration)
// until ctx ends, then drains requests for up to drain; connections still
// busy after it are closed (logged), which is no error: the stop was asked.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener, drain time.Duration,
	log *slog.Logger) error {
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
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), drain)
	defer cancel()
	err := hs.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("stopping: requests still running after the drain were cut", "drain", drain.String())
		return hs.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// stopSignals delivers the signals that stop serve (SIGINT, SIGTERM) from
// the moment it is called; the returned function stops the delivery.
func stopSignals() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	return c, func() { signal.Stop(c) }
}

// stopLater is the context serve runs under: with a delay, it ends delay
// after parent (the stop signal's) ends, or at once on another signal from
// signals, and m.stopping is closed when parent ends, so /readyz answers
// 503 while requests are still served: the endpoints drop the pod before
// its listener closes. Without a delay it ends with parent, as it always
// did. The returned function releases it.
func (m *Main) stopLater(parent context.Context, delay time.Duration,
	signals func() (<-chan os.Signal, func())) (context.Context, context.CancelFunc) {
	if delay <= 0 {
		return context.WithCancel(parent)
	}
	m.stopping = make(chan struct{})
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	go func() {
		select {
		case <-parent.Done():
		case <-ctx.Done():
			return
		}
		close(m.stopping)
		m.opts.Logger.Info("stopping: /readyz answers 503, serving on until the drain",
			"stop_delay", delay.String())
		m.waitStopDelay(ctx, delay, signals)
		cancel()
	}()
	return ctx, cancel
}

// waitStopDelay waits for delay, another stop signal or ctx's end.
func (m *Main) waitStopDelay(ctx context.Context, delay time.Duration,
	signals func() (<-chan os.Signal, func())) {
	again, stop := signals()
	defer stop()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-again:
		m.opts.Logger.Info("stopping: second signal, draining now")
	case <-ctx.Done():
	}
}

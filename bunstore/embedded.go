package bunstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	embeddedSuperuser = "postgres"
	readyTimeout      = 30 * time.Second
	stopTimeout       = 30 * time.Second
	maxSocketPath     = 107 // sizeof(sockaddr_un.sun_path) minus the NUL
	socketName        = "/.s.PGSQL.65535"
	logTailBytes      = 4096
)

// Embedded is a private PostgreSQL cluster run as a child process, reachable
// only through a Unix socket in a private directory, as superuser "postgres".
type Embedded struct {
	logger   *slog.Logger
	dataDir  string
	logPath  string
	sockDir  string
	tempSock bool // sockDir is a temporary directory that Stop removes
	attached bool // another process runs the server; Stop leaves it running
	port     int
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the postmaster has been reaped
	waitErr  error         // the postmaster's exit status, set before exited closes
	stopOnce sync.Once
	stopErr  error
}

// EmbeddedOption adjusts how StartEmbedded runs the cluster.
type EmbeddedOption func(*embeddedConfig)

type embeddedConfig struct{ noSync bool }

// WithNoSync makes the cluster skip every fsync (initdb --no-sync; fsync,
// synchronous_commit, full_page_writes off): much faster, but a server crash
// loses the last commits and an OS crash can corrupt the data. Use it only
// for throwaway (test) clusters.
func WithNoSync() EmbeddedOption {
	return func(c *embeddedConfig) { c.noSync = true }
}

// StartEmbedded starts a PostgreSQL cluster whose files live in dir: data in
// dir/pgdata (created by initdb on first use, reused afterwards), the server
// log in dir/postgres.log, the socket in dir/run (or in a private temporary
// directory when that path is too long for a socket). It returns once the
// server accepts connections. ctx bounds the startup only; the server runs
// until Stop. initdb and postgres come from PATH, else from the newest
// /usr/lib/postgresql/*/bin. When the process runs as root, the server runs
// as the "postgres" system user, and dir and its parents are made
// searchable (o+x, logged) where that user could not reach dir/pgdata.
func StartEmbedded(ctx context.Context, dir string, logger *slog.Logger, opts ...EmbeddedOption) (*Embedded, error) {
	var cfg embeddedConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bunstore: embedded postgres dir: %w", err)
	}
	e := &Embedded{logger: logger, dataDir: filepath.Join(dir, "pgdata"),
		logPath: filepath.Join(dir, "postgres.log"), exited: make(chan struct{})}
	if err := e.boot(ctx, dir, cfg); err != nil { // dirs, initdb if needed, postgres
		if e.tempSock {
			_ = os.RemoveAll(e.sockDir)
		}
		return nil, fmt.Errorf("bunstore: embedded postgres in %s: %w", dir, err)
	}
	if err := e.waitReady(ctx); err != nil {
		_ = e.Stop()
		return nil, err
	}
	logger.Info("embedded postgres ready", "data_dir", e.dataDir, "socket_dir", e.sockDir,
		"port", e.port, "pid", e.cmd.Process.Pid)
	return e, nil
}

func (e *Embedded) boot(ctx context.Context, dir string, cfg embeddedConfig) error {
	binDir, err := findBinaries()
	if err != nil {
		return err
	}
	cred, err := serverCredential()
	if err != nil {
		return err
	}
	if err := e.prepareDirs(dir, cred); err != nil {
		return err
	}
	if err := e.initCluster(ctx, binDir, cred, cfg); err != nil {
		return err
	}
	return e.start(binDir, cred, cfg)
}

// findBinaries returns the directory holding initdb and postgres: the one
// the initdb on PATH lives in, else the newest /usr/lib/postgresql/N/bin.
func findBinaries() (string, error) {
	version := func(binDir string) int { // N in /usr/lib/postgresql/N/bin
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
		return n
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			dirs = slices.Insert(dirs, 0, filepath.Dir(p))
		}
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, postgres) on PATH or in /usr/lib/postgresql/*/bin;" +
		" install them (Debian/Ubuntu: apt-get install postgresql) or configure an external database")
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// serverCredential returns nil when the server can run as the current user
// and the "postgres" system user when we are root, which PostgreSQL refuses.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, which PostgreSQL refuses, and there is no \"postgres\" "+
			"system user to run it as (installing the postgresql package creates one): %w", err)
	}
	uid, errU := strconv.ParseUint(u.Uid, 10, 32)
	gid, errG := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(errU, errG); err != nil {
		return nil, fmt.Errorf("user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// prepareDirs creates dir and the socket directory, makes them reachable
// for cred, and clears what a crashed previous run left (pid file, sockets).
func (e *Embedded) prepareDirs(dir string, cred *syscall.Credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := e.makeSearchable(dir, cred); err != nil {
		return err
	}
	if err := e.removeStalePID(); err != nil {
		return err
	}
	e.sockDir = filepath.Join(dir, "run")
	if err := os.RemoveAll(e.sockDir); err != nil {
		return err
	}
	if len(e.sockDir)+len(socketName) > maxSocketPath {
		var err error
		if e.sockDir, err = os.MkdirTemp("", "pgsock-"); err != nil {
			return err
		}
		e.tempSock = true
	}
	return ownedDir(e.sockDir, cred)
}

// makeSearchable adds o+x (never read or write) to dir and each parent that
// cred's user cannot search, so a server running as it reaches dir/pgdata.
func (e *Embedded) makeSearchable(dir string, cred *syscall.Credential) error {
	for d := dir; cred != nil; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		if mode&0o001 == 0 && (st == nil || st.Uid != cred.Uid || mode&0o100 == 0) &&
			(st == nil || st.Gid != cred.Gid || mode&0o010 == 0) {
			e.logger.Info("embedded postgres: letting the server user search a directory (o+x)", "dir", d)
			if err := os.Chmod(d, mode|0o001); err != nil {
				return err
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return nil
}

// ownedDir creates path (mode 0700) owned by cred (or by us if cred is nil).
func ownedDir(path string, cred *syscall.Credential) error {
	err := os.MkdirAll(path, 0o700)
	if err == nil && cred != nil {
		err = os.Chown(path, int(cred.Uid), int(cred.Gid))
	}
	return err
}

// removeStalePID deletes a postmaster.pid left by a server that is gone.
// PostgreSQL only checks that the recorded pid is alive, so a pid reused by
// another process (common after a container restart) would block it; a
// live process counts as the server if its working directory is pgdata.
func (e *Embedded) removeStalePID() error {
	path := filepath.Join(e.dataDir, "postmaster.pid")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH {
		if _, errCwd := os.Stat(fmt.Sprintf("/proc/%d/cwd", pid)); errCwd != nil || isServerOf(pid, e.dataDir) {
			return fmt.Errorf("a server (pid %d) is already running on %s; stop it first", pid, e.dataDir)
		}
	}
	e.logger.Warn("embedded postgres: removing stale postmaster.pid", "pid", pid, "data_dir", e.dataDir)
	return os.Remove(path)
}

// initCluster runs initdb unless the data directory exists. initdb writes
// into a temporary directory that is renamed when complete, so a crash
// during initdb never leaves a half-made cluster behind.
func (e *Embedded) initCluster(ctx context.Context, binDir string, cred *syscall.Credential, cfg embeddedConfig) error {
	if _, err := os.Stat(filepath.Join(e.dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	tmp := e.dataDir + ".initdb"
	if err := errors.Join(os.RemoveAll(tmp), ownedDir(tmp, cred)); err != nil {
		return err
	}
	args := []string{"-D", tmp, "-U", embeddedSuperuser, "--auth=trust", "-E", "UTF8", "--locale=C"}
	if cfg.noSync {
		args = append(args, "--no-sync")
	}
	e.logger.Info("embedded postgres: creating cluster", "data_dir", e.dataDir)
	cmd, err := e.spawn(ctx, filepath.Join(binDir, "initdb"), cred, args...)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("initdb: %w; log %s:\n%s", err, e.logPath, e.logTail())
	}
	return os.Rename(tmp, e.dataDir)
}

// spawn starts binary as cred in its own process group, output appended to
// the server log, the group killed if ctx ends. The child gets SIGINT
// (PostgreSQL's fast shutdown) if the thread that started it dies, so a
// killed test binary does not leave a server running.
func (e *Embedded) spawn(ctx context.Context, binary string, cred *syscall.Credential, args ...string) (*exec.Cmd, error) {
	logFile, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT, Credential: cred}
	return cmd, cmd.Start()
}

// start launches the postmaster and reaps it in the background.
func (e *Embedded) start(binDir string, cred *syscall.Credential, cfg embeddedConfig) error {
	// The server does not listen on TCP: the port only names the socket
	// file (and seeds the shared-memory key), and a free one keeps
	// concurrent clusters apart.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("pick port: %w", err)
	}
	e.port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	args := []string{"-D", e.dataDir, "-k", e.sockDir, "-p", strconv.Itoa(e.port), "-c", "listen_addresses="}
	if cfg.noSync {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	// Not the startup ctx: the server outlives it.
	if e.cmd, err = e.spawn(context.Background(), filepath.Join(binDir, "postgres"), cred, args...); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	go func() {
		e.waitErr = e.cmd.Wait()
		close(e.exited)
	}()
	return nil
}

// waitReady polls until the server accepts a connection, it exits, ctx
// ends or readyTimeout passes.
func (e *Embedded) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, e.DSN("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-e.exited:
			return fmt.Errorf("bunstore: embedded postgres exited during startup (%v); log %s:\n%s",
				e.waitErr, e.logPath, e.logTail())
		case <-ctx.Done():
			return fmt.Errorf("bunstore: embedded postgres not ready: %w (last error: %v); log %s:\n%s",
				ctx.Err(), err, e.logPath, e.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the end of the server log, for error messages.
func (e *Embedded) logTail() string {
	data, _ := os.ReadFile(e.logPath)
	return string(data[max(0, len(data)-logTailBytes):])
}

// DSN returns a connection URL for database dbname on this cluster, as the
// superuser "postgres" over the Unix socket.
func (e *Embedded) DSN(dbname string) string {
	q := url.Values{"host": {e.sockDir}, "port": {strconv.Itoa(e.port)}, "sslmode": {"disable"}}
	u := url.URL{Scheme: "postgres", User: url.User(embeddedSuperuser), Path: "/" + dbname, RawQuery: q.Encode()}
	return u.String()
}

// Stop shuts the server down and waits for it to exit: PostgreSQL's fast
// shutdown (sessions are disconnected, a checkpoint is written), then after
// stopTimeout an immediate shutdown, then after another stopTimeout SIGKILL.
// It reports an error if the server had died on its own or had to be
// killed. Later calls return the first call's result.
func (e *Embedded) Stop() error {
	e.stopOnce.Do(func() { e.stopErr = e.stop() })
	return e.stopErr
}

func (e *Embedded) stop() error {
	if e.attached {
		return nil
	}
	if e.tempSock {
		defer os.RemoveAll(e.sockDir)
	}
	if err := e.cmd.Process.Signal(syscall.SIGINT); err != nil { // already reaped
		return fmt.Errorf("bunstore: embedded postgres had exited unexpectedly: %v", e.waitErr)
	}
	// SIGQUIT makes the postmaster kill its backends (each in its own
	// session) and wait for them; SIGKILL would leave them to notice alone.
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGKILL} {
		select {
		case <-e.exited:
			e.logger.Info("embedded postgres stopped", "data_dir", e.dataDir)
			return nil
		case <-time.After(stopTimeout):
		}
		e.logger.Warn("embedded postgres did not stop in time", "pid", e.cmd.Process.Pid, "sending", sig.String())
		_ = e.cmd.Process.Signal(sig)
	}
	<-e.exited
	return fmt.Errorf("bunstore: embedded postgres did not shut down within %s and was killed", 2*stopTimeout)
}

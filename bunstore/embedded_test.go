package bunstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"platformapi/resources/testkit"

	"github.com/jackc/pgx/v5"
)

func startTestCluster(t *testing.T, dir string, opts ...EmbeddedOption) *Embedded {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	e, err := StartEmbedded(t.Context(), dir, logger, opts...)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	return e
}

func mustExec(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryInt(t *testing.T, dsn, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// childPIDs lists the processes whose parent is pid.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var children []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		_, rest, ok := strings.Cut(string(data), ") ") // after "pid (comm) "
		fields := strings.Fields(rest)
		if err == nil && ok && len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			children = append(children, child)
		}
	}
	if len(children) == 0 {
		t.Fatalf("postmaster %d has no children in /proc", pid)
	}
	return children
}

// waitGone waits until none of pids is running (zombies count as gone).
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		testkit.Eventually(t, 0, fmt.Sprintf("backend %d gone after the postmaster died", pid), func() bool {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			_, rest, _ := strings.Cut(string(data), ") ")
			return err != nil || strings.HasPrefix(rest, "Z")
		})
	}
}

func TestEmbedded_ServesConnectionsUntilStopped(t *testing.T) {
	dir := t.TempDir()
	e := startTestCluster(t, dir, WithNoSync())

	db, err := Open(t.Context(), e.DSN("postgres"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var user string
	if err := db.NewRaw("SELECT current_user").Scan(t.Context(), &user); err != nil || user != "postgres" {
		t.Fatalf("current_user = %q, %v; want postgres", user, err)
	}
	_ = db.Close()
	if fi, err := os.Stat(e.sockDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir %s: %v, %v; want mode 0700", e.sockDir, fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "postgres.log")); err != nil {
		t.Errorf("server log: %v", err)
	}

	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := e.Stop(); err != nil {
		t.Errorf("second Stop: %v; want nil (idempotent)", err)
	}
	if conn, err := pgx.Connect(t.Context(), e.DSN("postgres")); err == nil {
		_ = conn.Close(t.Context())
		t.Fatal("connected after Stop")
	}
	if _, err := os.Stat(filepath.Join(dir, "pgdata", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid after Stop: %v; want it removed", err)
	}
}

func TestEmbedded_RestartReusesDataDir(t *testing.T) {
	dir := t.TempDir()
	e := startTestCluster(t, dir, WithNoSync())
	mustExec(t, e.DSN("postgres"), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)")
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	e = startTestCluster(t, dir, WithNoSync())
	if got := queryInt(t, e.DSN("postgres"), "SELECT v FROM kept"); got != 42 {
		t.Errorf("after restart kept.v = %d; want 42", got)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
	if n := strings.Count(string(log), "Success. You can now start the database server"); n != 1 {
		t.Errorf("initdb ran %d times; want once", n)
	}
}

func TestEmbedded_RemovesStalePostmasterPid(t *testing.T) {
	// A live process that is not a postgres server, as after pid reuse.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	// A pid that has certainly exited.
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}

	for name, pid := range map[string]int{"dead pid": done.Process.Pid, "reused pid": sleeper.Process.Pid} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := startTestCluster(t, dir, WithNoSync()).Stop(); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			pidFile := filepath.Join(dir, "pgdata", "postmaster.pid")
			stale := strconv.Itoa(pid) + "\n" + filepath.Join(dir, "pgdata") + "\n"
			if err := os.WriteFile(pidFile, []byte(stale), 0o600); err != nil {
				t.Fatal(err)
			}
			e := startTestCluster(t, dir, WithNoSync())
			if got := queryInt(t, e.DSN("postgres"), "SELECT 1"); got != 1 {
				t.Errorf("SELECT 1 = %d", got)
			}
		})
	}
}

func TestEmbedded_RecoversAfterServerIsKilled(t *testing.T) {
	dir := t.TempDir()
	// Not WithNoSync: with synchronous_commit off a crash may lose the row.
	e := startTestCluster(t, dir)
	mustExec(t, e.DSN("postgres"), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)")

	// Backends run in their own sessions, so killing the postmaster's
	// process group does not kill them; they exit once they notice, and
	// until then their shared memory blocks a new server.
	backends := childPIDs(t, e.cmd.Process.Pid)
	if err := syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-e.exited
	waitGone(t, backends)
	if err := e.Stop(); err == nil {
		t.Error("Stop after the server died = nil; want an error saying so")
	}

	e = startTestCluster(t, dir, WithNoSync())
	if got := queryInt(t, e.DSN("postgres"), "SELECT v FROM kept"); got != 7 {
		t.Errorf("after crash recovery kept.v = %d; want 7", got)
	}
}

func TestEmbedded_RefusesDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	startTestCluster(t, dir, WithNoSync())

	e, err := StartEmbedded(t.Context(), dir, slog.New(slog.DiscardHandler), WithNoSync())
	if err == nil {
		_ = e.Stop()
		t.Fatal("second StartEmbedded on a running data dir succeeded")
	}
	if !strings.Contains(err.Error(), "already running") {
		t.Errorf("error = %v; want it to say a server is already running", err)
	}
}

func TestEmbedded_LongDirUsesShortSocketDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	e := startTestCluster(t, dir, WithNoSync())
	if !e.tempSock || strings.HasPrefix(e.sockDir, dir) {
		t.Errorf("socket dir = %s; want a short temporary dir", e.sockDir)
	}
	if got := queryInt(t, e.DSN("postgres"), "SELECT 1"); got != 1 {
		t.Errorf("SELECT 1 = %d", got)
	}
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(e.sockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary socket dir after Stop: %v; want it removed", err)
	}
}

package bunstore

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// AttachEmbedded connects to the private cluster in dir when another process
// (a running `serve`) already runs it, so portal and migrate commands can
// work beside the server. It reports false when no live server runs there.
// Stop on an attached cluster leaves the server running.
func AttachEmbedded(dir string, logger *slog.Logger) (*Embedded, bool, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, err
	}
	dataDir := filepath.Join(dir, "pgdata")
	data, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil, false, nil
	}
	// postmaster.pid: pid, data dir, start time, port, socket dir, listen
	// addresses, shared memory key, status.
	lines := strings.Split(string(data), "\n")
	if len(lines) < 8 || strings.TrimSpace(lines[7]) != "ready" {
		return nil, false, nil
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if pid <= 0 || err != nil || syscall.Kill(pid, 0) == syscall.ESRCH || !isServerOf(pid, dataDir) {
		return nil, false, nil
	}
	e := &Embedded{logger: logger, dataDir: dataDir, logPath: filepath.Join(dir, "postgres.log"),
		sockDir: strings.TrimSpace(lines[4]), port: port, attached: true, exited: make(chan struct{})}
	logger.Info("embedded postgres: using the running cluster", "data_dir", dataDir, "pid", pid)
	return e, true, nil
}

// isServerOf reports whether process pid works in dataDir (is its postmaster).
func isServerOf(pid int, dataDir string) bool {
	cwd, errCwd := os.Stat(fmt.Sprintf("/proc/%d/cwd", pid))
	dd, errData := os.Stat(dataDir)
	return errCwd == nil && errData == nil && os.SameFile(cwd, dd)
}

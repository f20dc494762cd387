// Package redistest runs a private redis-server for a test, on a free
// loopback port, that the test may stop and start again. Without
// redis-server on PATH the test is skipped, except under CI (CI=true), where
// it fails: CI installs redis-server.
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Server is one private redis-server.
type Server struct {
	t    testing.TB
	Port int
	cmd  *exec.Cmd
}

// Start runs a redis-server for t on a free port; it is stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (.ci/run installs it)")
		}
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, Port: ln.Addr().(*net.TCPAddr).Port}
	_ = ln.Close()
	s.Resume()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// address.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Stop kills the server (as an outage would) and waits until it is gone.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Resume starts the server again on the same port, empty, and waits until
// it accepts connections.
func (s *Server) Resume() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatal(fmt.Sprintf("redis-server on port %d did not start", s.Port))
}

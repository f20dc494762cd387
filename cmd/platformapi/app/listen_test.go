package app

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"platformapi/bunstore/pgtest"
)

// TestListenTCP_RefusalSaysWhatWentWrong: an address in use is said to be
// in use (another server runs there), with the flag that chooses another;
// an address that cannot be one (a host that does not resolve, a port out
// of range) is not blamed on another server, and names the flag too.
func TestListenTCP_RefusalSaysWhatWentWrong(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		addr     string
		another  bool
		fragment string
	}{
		{busy.Addr().String(), true, "--addr"},
		{"no-such-host.invalid:8080", false, "--addr"},
		{"127.0.0.1:70000", false, "--addr"},
	} {
		t.Run(c.addr, func(t *testing.T) {
			ln, err := listenTCP(c.addr, "--addr")
			if err == nil {
				ln.Close()
				t.Fatalf("listening on %s succeeded", c.addr)
			}
			msg := err.Error()
			if strings.Contains(msg, "another server") != c.another || !strings.Contains(msg, c.fragment) {
				t.Fatalf("%s: %q", c.addr, msg)
			}
		})
	}
}

// TestServe_AddressTaken_RefusedBeforeAnyChange: serve --demo on an
// address another server holds minted a fresh administrator token, printed
// it, and migrated and filled the database before it failed to listen; it
// now takes its addresses first, so the refusal prints nothing and leaves
// the database as it was (empty here).
func TestServe_AddressTaken_RefusedBeforeAnyChange(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "listen-test-pepper-0123456789")
	for _, c := range []struct{ name, addr, metrics, flag string }{
		{"--addr", busy.Addr().String(), "", "--addr"},
		{"--metrics-addr", freeAddr(t), busy.Addr().String(), "--metrics-addr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := pgtest.EmptyDSN(t)
			var out, errOut bytes.Buffer
			root := NewRootCommand(&out, &errOut)
			args := []string{"--database-url", dsn, "--log-level", "error", "serve", "--demo",
				"--data-dir", t.TempDir(), "--addr", c.addr}
			if c.metrics != "" {
				args = append(args, "--metrics-addr", c.metrics)
			}
			root.SetArgs(args)
			err := root.ExecuteContext(t.Context())
			if err == nil || !strings.Contains(err.Error(), "another server runs there") ||
				!strings.Contains(err.Error(), c.flag) {
				t.Fatalf("serve on a taken %s: %v", c.flag, err)
			}
			if out.Len() > 0 {
				t.Errorf("serve printed before it failed to listen: %s", out.String())
			}
			checkNotMigrated(t, dsn)
		})
	}
}

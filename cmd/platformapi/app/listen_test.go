package app

import (
	"net"
	"strings"
	"testing"
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

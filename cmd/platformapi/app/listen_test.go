package app

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// TestNewHTTPServer_ClientThatNeverReads_AnswerCutAtTheWriteTimeout: a
// client that sends a request and never reads its answer cannot hold the
// handler: once the socket buffers are full the write fails at the write
// timeout (without one it would block for ever).
func TestNewHTTPServer_ClientThatNeverReads_AnswerCutAtTheWriteTimeout(t *testing.T) {
	wrote := make(chan error, 1)
	chunk := make([]byte, 1<<20)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var err error
		for i := 0; i < 512 && err == nil; i++ { // 512 MiB: more than any socket buffers hold
			_, err = w.Write(chunk)
		}
		wrote <- err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(h, nil, time.Second)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: test\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select { // the client reads nothing
	case err := <-wrote:
		if err == nil {
			t.Fatal("the whole answer was written to a client that reads nothing")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handler is still writing to a client that reads nothing after 30 s")
	}
}

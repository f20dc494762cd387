package app

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
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

// TestNewHTTPServer_AnswerFinishedAtTheRequestDeadline_WrittenInFullToASlowReader:
// an operation may run until its request's deadline (--request-timeout);
// the answer it then writes still reaches a client reading at a modest
// pace in full, because answerTimeout gives the write as long again. The
// same reader with the write deadline at the request deadline is cut —
// the reason for twice.
func TestNewHTTPServer_AnswerFinishedAtTheRequestDeadline_WrittenInFullToASlowReader(t *testing.T) {
	const requestTimeout = time.Second
	o := ServeOptions{RequestTimeout: requestTimeout}
	for _, tc := range []struct {
		name         string
		writeTimeout time.Duration
		whole        bool
	}{
		{"answerTimeout", answerTimeout(o), true},
		{"write deadline at the request deadline", requestTimeout, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.whole && raceEnabled {
				t.Skip("under the race detector a write that keeps making progress runs past its " +
					"deadline (measured: a 32 MiB answer written whole 300 ms after a 1 s deadline)")
			}
			got, want := slowAnswer(t, tc.writeTimeout, requestTimeout*9/10)
			if whole := got == want; whole != tc.whole {
				t.Fatalf("read %d of %d bytes; want the whole answer: %v", got, want, tc.whole)
			}
		})
	}
}

// slowAnswer serves, with the given write deadline, a handler that answers
// 32 MiB (more than the socket buffers hold: see smallBufferClient) after
// working for `work`, to a client reading 1 MiB every 12 ms; it returns
// the bytes the client read and the answer's length.
func slowAnswer(t *testing.T, writeTimeout, work time.Duration) (got, want int64) {
	t.Helper()
	const size = 32 << 20
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // the operation takes its time, up to just before the deadline
		case <-time.After(work):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, _ = w.Write(make([]byte, size))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(h, nil, writeTimeout)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	resp, err := smallBufferClient().Get("http://" + ln.Addr().String() + "/")
	if err != nil { // cut before the head arrived (the reset of a cut connection can overtake it)
		t.Logf("no answer: %v", err)
		return 0, size
	}
	defer resp.Body.Close()
	tick := time.NewTicker(12 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := io.CopyN(io.Discard, resp.Body, 1<<20)
		got += n
		if err != nil {
			return got, size
		}
		<-tick.C
	}
}

// smallBufferClient is an HTTP client whose connections receive into a
// 64 KiB socket buffer. Linux grows a loopback receive buffer up to
// net.ipv4.tcp_rmem's maximum (32 MiB on some hosts), which would take a
// whole 32 MiB answer at once and hide how fast the client reads.
func smallBufferClient() *http.Client {
	dial := (&net.Dialer{}).DialContext
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				err = errors.Join(err, tc.SetReadBuffer(64<<10))
			}
			return c, err
		}}}
}

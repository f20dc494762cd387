package app

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the flusher and the test at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestBufferedLog_LinesReachTheSinkWhileRunningAndAllOnStop(t *testing.T) {
	var sink lockedBuffer
	w, stop := bufferedLog(&sink)
	defer stop()
	if _, err := w.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	// The periodic flush writes it without any further line or a stop.
	deadline := time.Now().Add(10 * time.Second)
	for ; sink.String() != "first\n"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a buffered line never reached the sink: %q", sink.String())
		}
	}
	big := strings.Repeat("x", logBufferSize) + "\n" // more than the buffer: written at once
	if _, err := w.Write([]byte(big)); err != nil {
		t.Fatal(err)
	}
	if got := sink.String(); got != "first\n"+big {
		t.Fatalf("a line larger than the buffer was held back (%d bytes written)", len(got))
	}
	_, _ = w.Write([]byte("last\n"))
	stop()
	if got := sink.String(); !strings.HasSuffix(got, big+"last\n") {
		t.Fatalf("stop did not write the buffered line: ends %q", got[max(0, len(got)-20):])
	}
}

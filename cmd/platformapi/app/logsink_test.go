package app

import (
	"strings"
	"testing"

	"platformapi/resources/testkit"
)

func TestBufferedLog_LinesReachTheSinkWhileRunningAndAllOnStop(t *testing.T) {
	var sink testkit.LockedBuffer
	w, stop := bufferedLog(&sink)
	defer stop()
	if _, err := w.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	// The periodic flush writes it without any further line or a stop.
	testkit.Eventually(t, 0, "a buffered line reaches the sink", func() bool { return sink.String() == "first\n" })
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

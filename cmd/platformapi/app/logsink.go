package app

import (
	"io"
	"time"

	"go.uber.org/zap/zapcore"
)

// Log buffering of `serve`: lines are collected in memory and written out
// every logFlushInterval or whenever logBufferSize is reached, instead of
// one write system call per line under the logger's lock. Under load that
// was 2.8 % of the server's CPU samples on a GET (docs/benchmarks.md).
// What a crash of the process can lose is the last logFlushInterval of
// lines; a normal stop writes everything (stopLogs).
const (
	logFlushInterval = 100 * time.Millisecond
	logBufferSize    = 256 << 10
)

// bufferedLog wraps w for `serve`: the returned writer buffers (see above);
// stop writes what is buffered and ends the periodic flush.
func bufferedLog(w io.Writer) (out io.Writer, stop func()) {
	b := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(w), Size: logBufferSize,
		FlushInterval: logFlushInterval}
	return b, func() { _ = b.Stop() }
}

package nodeagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
)

// The copy of one file takes two goroutines. The mover copies the file a
// span at a time: in the kernel (copy_file_range, as cp does) when both
// files allow it, else by reading and writing through a buffer. The
// hasher reads each span back from the file written (from the page cache)
// and hashes it while the mover copies the next: the digest is that of
// the bytes on the node, and hashing runs beside copying.
const (
	spanSize      = 4 << 20 // bytes moved, then hashed, at a time
	spansInFlight = 4       // spans moved and waiting to be hashed
	// writebackEvery is how many bytes of a file are written before the
	// kernel is asked to start writing them to the disk.
	writebackEvery = 64 << 20
	minBurst       = 16 << 10
	throttleHz     = 8 // a throttled copy moves pieces of an eighth of its rate
)

// buffers recycles the hashers' and the movers' buffers across files.
var buffers = sync.Pool{New: func() any { b := make([]byte, spanSize); return &b }}

// newThrottle is the limiter of bytesPerSecond read by all copies (nil:
// none).
func newThrottle(bytesPerSecond int64) *rate.Limiter {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := int(min(max(bytesPerSecond/throttleHz, minBurst), spanSize))
	return rate.NewLimiter(rate.Limit(bytesPerSecond), burst)
}

// span is a stretch of the file just written.
type span struct {
	off int64
	n   int
}

// pump copies src into dst (opened for reading and writing) and answers
// the lower-case hex sha256 of what dst holds. progress is called with the
// bytes of each span moved.
func (a *Agent) pump(ctx context.Context, src, dst *os.File, name string,
	progress func(int64)) (string, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	spans := make(chan span, spansInFlight)
	h := sha256.New()
	var g errgroup.Group
	g.Go(func() error {
		defer close(spans)
		return stopOnError(stop, a.moveAll(ctx, newMover(src, dst), name, spans, progress))
	})
	g.Go(func() error { return stopOnError(stop, hashSpans(dst, name, spans, h)) })
	if err := g.Wait(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// moveAll moves the whole file a span at a time (throttled when the agent
// is), passing each span to the hasher, until the end of src.
func (a *Agent) moveAll(ctx context.Context, m *mover, name string, spans chan<- span,
	progress func(int64)) error {
	defer m.release()
	size := spanSize
	if a.throttle != nil {
		size = a.throttle.Burst()
	}
	var off, flushed int64
	for {
		if a.throttle != nil && a.throttle.WaitN(ctx, size) != nil || ctx.Err() != nil {
			return context.Cause(ctx)
		}
		n, err := m.move(off, size, name)
		if n > 0 {
			a.bytesRead.Add(int64(n))
			progress(int64(n))
			spans <- span{off: off, n: n}
			off += int64(n)
		}
		if off-flushed >= writebackEvery {
			startWriteback(m.dst, flushed, off-flushed)
			flushed = off
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// hashSpans reads each span back from dst and hashes it. After a failure
// it only drains the spans (so the mover never blocks).
func hashSpans(dst *os.File, name string, spans <-chan span, h hash.Hash) error {
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	var failed error
	for s := range spans {
		if failed != nil {
			continue
		}
		if _, err := dst.ReadAt((*buf)[:s.n], s.off); err != nil {
			failed = cacheFailure("read back "+name, err)
			continue
		}
		h.Write((*buf)[:s.n])
	}
	return failed
}

// readWrite moves up to n bytes at off through buf: a read from src, a
// write to dst.
func (m *mover) readWrite(off int64, n int, name string) (int, error) {
	if m.buf == nil {
		m.buf = buffers.Get().(*[]byte)
	}
	k, err := m.src.ReadAt((*m.buf)[:n], off)
	if err != nil && err != io.EOF {
		return 0, storeFailure(name, err)
	}
	if k == 0 {
		return 0, io.EOF
	}
	if _, werr := m.dst.WriteAt((*m.buf)[:k], off); werr != nil {
		return 0, cacheFailure("write "+name, werr)
	}
	return k, nil
}

// release gives the mover's buffer back.
func (m *mover) release() {
	if m.buf != nil {
		buffers.Put(m.buf)
		m.buf = nil
	}
}

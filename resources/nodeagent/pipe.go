package nodeagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
)

// The copy pipeline of one file: a reader fills buffers from the store, a
// hasher hashes each, a writer writes it to the cache and hands the
// buffer back. The three run at once on consecutive buffers, so reading,
// hashing and writing one file overlap instead of taking turns.
const (
	chunkSize = 1 << 20 // bytes per buffer
	pipeDepth = 4       // buffers per file in flight
	// writebackEvery is how many bytes of a file are written before the
	// kernel is asked to start writing them to the disk.
	writebackEvery = 8 << 20
	minBurst       = 16 << 10
	throttleHz     = 8 // a throttled copy reads in pieces of an eighth of a second
)

// chunks recycles the pipeline's buffers across files.
var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// newThrottle is the limiter of bytesPerSecond read by all copies (nil:
// none).
func newThrottle(bytesPerSecond int64) *rate.Limiter {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := int(min(max(bytesPerSecond/throttleHz, minBurst), chunkSize))
	return rate.NewLimiter(rate.Limit(bytesPerSecond), burst)
}

// block is one buffer's worth of a file.
type block struct {
	buf *[]byte
	n   int
}

// pump copies src into dst, hashing what it writes, and answers the
// lower-case hex sha256. progress is called with the bytes of each write.
func (a *Agent) pump(ctx context.Context, src io.Reader, dst *os.File, name string,
	progress func(int64)) (string, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var g errgroup.Group
	free := make(chan *[]byte, pipeDepth)
	for range pipeDepth {
		free <- chunks.Get().(*[]byte)
	}
	toHash, toWrite := make(chan block, pipeDepth), make(chan block, pipeDepth)
	h := sha256.New()
	g.Go(func() error { defer close(toHash); return a.readBlocks(ctx, src, name, free, toHash) })
	g.Go(func() error {
		defer close(toWrite)
		for b := range toHash {
			h.Write((*b.buf)[:b.n])
			toWrite <- b
		}
		return nil
	})
	g.Go(func() error { return writeBlocks(dst, name, toWrite, free, progress, stop) })
	err := g.Wait()
	for range pipeDepth {
		chunks.Put(<-free)
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readBlocks reads src into free buffers and sends them on, until EOF.
func (a *Agent) readBlocks(ctx context.Context, src io.Reader, name string, free chan *[]byte,
	out chan<- block) error {
	size := chunkSize
	if a.throttle != nil {
		size = a.throttle.Burst()
	}
	for {
		var buf *[]byte
		select {
		case buf = <-free:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if a.throttle != nil {
			if err := a.throttle.WaitN(ctx, size); err != nil {
				free <- buf
				return context.Cause(ctx)
			}
		}
		n, err := io.ReadFull(src, (*buf)[:size])
		a.bytesRead.Add(int64(n))
		if n > 0 {
			out <- block{buf: buf, n: n}
		} else {
			free <- buf
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil
		case err != nil:
			return storeFailure(name, err)
		}
	}
}

// writeBlocks writes each block to dst and frees its buffer. After a
// failed write it stops the reader and only frees buffers (so the others
// never block).
func writeBlocks(dst *os.File, name string, in <-chan block, free chan<- *[]byte, progress func(int64),
	stop context.CancelCauseFunc) error {
	var werr error
	var written, flushed int64
	for b := range in {
		if werr == nil {
			if _, err := dst.Write((*b.buf)[:b.n]); err != nil {
				werr = cacheFailure("write "+name, err)
				stop(werr)
			} else {
				progress(int64(b.n))
				written += int64(b.n)
			}
		}
		free <- b.buf
		if werr == nil && written-flushed >= writebackEvery {
			startWriteback(dst, flushed, written-flushed)
			flushed = written
		}
	}
	return werr
}

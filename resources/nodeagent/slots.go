package nodeagent

import (
	"context"
	"slices"
	"sync"
)

// slots limits how much disk work runs at once: copies, and the checks of
// caches found on disk, share --max-copies slots. A waiting copy goes
// before every waiting check, and a check takes a slot one file at a time,
// so a copy an operator asked for waits at most for the file being hashed,
// never behind the checks of every cache on the node.
type slots struct {
	mu     sync.Mutex
	free   int
	copies []chan struct{} // copies waiting, first come first
	checks []chan struct{} // checks waiting, first come first
}

func newSlots(n int) *slots { return &slots{free: n} }

// acquire takes a slot for a copy (urgent) or a check, waiting while none
// is free; it answers ctx's error, holding nothing, when ctx ends first.
func (s *slots) acquire(ctx context.Context, urgent bool) error {
	s.mu.Lock()
	if s.free > 0 && (urgent || len(s.copies) == 0) {
		s.free--
		s.mu.Unlock()
		return nil
	}
	granted := make(chan struct{})
	if urgent {
		s.copies = append(s.copies, granted)
	} else {
		s.checks = append(s.checks, granted)
	}
	s.mu.Unlock()
	select {
	case <-granted:
		return nil
	case <-ctx.Done():
		s.withdraw(granted)
		return ctx.Err()
	}
}

// withdraw takes a waiter out of its queue; one granted meanwhile hands
// its slot on.
func (s *slots) withdraw(granted chan struct{}) {
	s.mu.Lock()
	n := len(s.copies) + len(s.checks)
	s.copies = slices.DeleteFunc(s.copies, func(c chan struct{}) bool { return c == granted })
	s.checks = slices.DeleteFunc(s.checks, func(c chan struct{}) bool { return c == granted })
	still := n != len(s.copies)+len(s.checks)
	s.mu.Unlock()
	if !still {
		s.release()
	}
}

// release gives a slot back: to the first waiting copy, else to the first
// waiting check, else to the pool.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.copies) > 0:
		close(s.copies[0])
		s.copies = s.copies[1:]
	case len(s.checks) > 0:
		close(s.checks[0])
		s.checks = s.checks[1:]
	default:
		s.free++
	}
}

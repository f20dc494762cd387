package nodeagent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources/testkit"
)

// waiting is how many copies and checks wait for a slot.
func (s *slots) waiting() (copies, checks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.copies), len(s.checks)
}

func TestSlots_AWaitingCopyGoesBeforeChecksThatWaitedLonger(t *testing.T) {
	s := newSlots(1)
	if err := s.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 3)
	for i, who := range []string{"check 1", "check 2", "copy"} {
		go func() {
			if err := s.acquire(context.Background(), who == "copy"); err == nil {
				order <- who
				s.release()
			}
		}()
		testkit.Eventually(t, 10*time.Second, who+" waits", func() bool {
			copies, checks := s.waiting()
			return copies+checks == i+1
		})
	}
	s.release()
	got := []string{<-order, <-order, <-order}
	if diff := cmp.Diff([]string{"copy", "check 1", "check 2"}, got); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
}

func TestSlots_AWaiterThatGivesUp_HoldsNothing(t *testing.T) {
	s := newSlots(1)
	if err := s.acquire(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.acquire(ctx, false) }()
	testkit.Eventually(t, 10*time.Second, "the check waits", func() bool {
		_, checks := s.waiting()
		return checks == 1
	})
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("gave up: %v", err)
	}
	s.release()
	if err := s.acquire(context.Background(), false); err != nil { // the one slot is free
		t.Fatal(err)
	}
	if copies, checks := s.waiting(); copies+checks != 0 || s.free != 0 {
		t.Fatalf("after: %d copies and %d checks waiting, %d free", copies, checks, s.free)
	}
}

func TestMaxCopies_ZeroIsTheDefault(t *testing.T) {
	for given, want := range map[int]int{0: DefaultMaxCopies, 3: 3} {
		cfg := newConfig(t)
		cfg.MaxCopies = given
		a := startAgent(t, cfg).a
		if got := a.MaxCopies(); got != want {
			t.Errorf("MaxCopies %d: runs %d at once, want %d", given, got, want)
		}
	}
}

package codehostsim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"platformapi/resources"
)

func TestSim_IsACodeHost(t *testing.T) {
	var _ resources.CodeHost = New()
}

func TestSim_MissingGroup_FindsNothingThenCreatesMarked(t *testing.T) {
	s := New()
	ctx := context.Background()
	g, err := s.FindGroup(ctx, "acme")
	if err != nil || g != nil {
		t.Fatalf("FindGroup on empty host = %v, %v; want nil, nil", g, err)
	}
	g, err = s.EnsureGroup(ctx, "acme", "Acme Ltd")
	if err != nil {
		t.Fatalf("EnsureGroup: %v", err)
	}
	want := resources.VCSGroup{Path: "acme", Name: "Acme Ltd", WebURL: "https://code.sim.invalid/acme", Adoptable: true}
	if *g != want {
		t.Fatalf("created group = %+v; want %+v", *g, want)
	}
	if got := s.Groups(); len(got) != 1 || got[0] != want {
		t.Fatalf("Groups() = %+v; want [%+v]", got, want)
	}
	if s.Calls() != 2 {
		t.Fatalf("Calls() = %d; want 2", s.Calls())
	}
}

func TestSim_EnsureTwice_AdoptsItsOwnGroup(t *testing.T) {
	s := New()
	ctx := context.Background()
	if _, err := s.EnsureGroup(ctx, "acme", "Acme"); err != nil {
		t.Fatal(err)
	}
	g, err := s.EnsureGroup(ctx, "acme", "Acme again")
	if err != nil || g.Name != "Acme" {
		t.Fatalf("second EnsureGroup = %+v, %v; want the first group adopted", g, err)
	}
	if n := len(s.Groups()); n != 1 {
		t.Fatalf("%d groups; want 1", n)
	}
}

func TestSim_ExistingEmptyGroup_Adopted(t *testing.T) {
	s := New()
	s.AddEmptyGroup("acme")
	g, err := s.EnsureGroup(context.Background(), "acme", "Acme")
	if err != nil {
		t.Fatalf("EnsureGroup: %v", err)
	}
	if !g.Adoptable || g.Path != "acme" || g.Name != "acme" {
		t.Fatalf("adopted group = %+v; want the existing empty group", g)
	}
}

func TestSim_ForeignGroup_Collision(t *testing.T) {
	s := New()
	s.HoldCollidingGroup("acme")
	g, err := s.FindGroup(context.Background(), "acme")
	if err != nil || g == nil || g.Adoptable {
		t.Fatalf("FindGroup = %+v, %v; want a present, non-adoptable group", g, err)
	}
	_, err = s.EnsureGroup(context.Background(), "acme", "Acme")
	if !errors.Is(err, resources.ErrVCSGroupCollision) {
		t.Fatalf("EnsureGroup err = %v; want ErrVCSGroupCollision", err)
	}
}

func TestSim_Unreachable_EveryCallFailsUntilLifted(t *testing.T) {
	s := New()
	ctx := context.Background()
	s.SetUnreachable(true)
	if _, err := s.FindGroup(ctx, "acme"); !errors.Is(err, resources.ErrCodeHostUnreachable) {
		t.Fatalf("FindGroup err = %v; want ErrCodeHostUnreachable", err)
	}
	if _, err := s.EnsureGroup(ctx, "acme", "Acme"); !errors.Is(err, resources.ErrCodeHostUnreachable) {
		t.Fatalf("EnsureGroup err = %v; want ErrCodeHostUnreachable", err)
	}
	if len(s.Groups()) != 0 {
		t.Fatal("an unreachable host created a group")
	}
	s.SetUnreachable(false)
	if _, err := s.EnsureGroup(ctx, "acme", "Acme"); err != nil {
		t.Fatalf("after lifting the fault: %v", err)
	}
}

func TestSim_FailNext_FailsExactlyNCalls(t *testing.T) {
	s := New()
	ctx := context.Background()
	s.FailNext(2)
	for i := range 2 {
		if _, err := s.FindGroup(ctx, "acme"); !errors.Is(err, resources.ErrCodeHostUnreachable) {
			t.Fatalf("call %d err = %v; want ErrCodeHostUnreachable", i+1, err)
		}
	}
	if _, err := s.FindGroup(ctx, "acme"); err != nil {
		t.Fatalf("third call err = %v; want success", err)
	}
	if s.Calls() != 3 {
		t.Fatalf("Calls() = %d; want 3", s.Calls())
	}
}

func TestSim_Delay_HonoursContextDeadline(t *testing.T) {
	s := New()
	s.SetDelay(10 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.EnsureGroup(ctx, "acme", "Acme")
	if !errors.Is(err, resources.ErrCodeHostUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want ErrCodeHostUnreachable wrapping DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("call took %v; the context deadline was not honoured", el)
	}
	if len(s.Groups()) != 0 {
		t.Fatal("a timed-out call created a group")
	}
}

func TestSim_Delay_ShortDelayStillAnswers(t *testing.T) {
	s := New()
	s.SetDelay(20 * time.Millisecond)
	start := time.Now()
	if _, err := s.EnsureGroup(context.Background(), "acme", "Acme"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("call took %v; want at least the delay", el)
	}
}

func TestSim_ConcurrentEnsure_OneGroupNoRace(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := s.EnsureGroup(context.Background(), "acme", "Acme"); err != nil {
				t.Error(err)
			}
			s.FailNext(0)
			_ = s.Groups()
		})
	}
	wg.Wait()
	if n := len(s.Groups()); n != 1 || s.Calls() != 16 {
		t.Fatalf("groups = %d, calls = %d; want 1, 16", n, s.Calls())
	}
}

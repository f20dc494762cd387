// Package codehostsim is an in-process simulated code host implementing
// resources.CodeHost, with fault injection for the failure paths the contract
// names. The demo world and the tests use it in place of a real GitLab.
package codehostsim

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"platformapi/resources"
)

// webBase is where the simulated groups appear to live; .invalid never resolves.
const webBase = "https://code.sim.invalid/"

// group is one simulated group with the facts the adoption rule needs.
type group struct {
	path, name, description string
	hasProjects             bool
	hasSubgroups            bool
}

func (g *group) view() *resources.VCSGroup {
	return &resources.VCSGroup{
		Path:      g.path,
		Name:      g.name,
		WebURL:    webBase + g.path,
		Adoptable: resources.GroupAdoptable(g.description, g.hasProjects, g.hasSubgroups),
	}
}

// Sim is a simulated code host. It is safe for concurrent use, and every
// fault setting may be changed at any time, also while calls are in flight.
type Sim struct {
	mu          sync.Mutex
	groups      map[string]*group
	unreachable bool
	failNext    int
	delay       time.Duration
	calls       int
}

// New returns a reachable simulated code host with no groups and no faults.
func New() *Sim {
	return &Sim{groups: map[string]*group{}}
}

// SetUnreachable makes every following call fail with an error wrapping
// resources.ErrCodeHostUnreachable (true) or lifts that fault (false).
func (s *Sim) SetUnreachable(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unreachable = on
}

// FailNext makes the next n calls fail as if the code host were unreachable;
// n <= 0 cancels failures still pending.
func (s *Sim) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = max(n, 0)
}

// SetDelay makes each following call wait d before answering; a call whose
// ctx ends first returns the ctx error wrapped in ErrCodeHostUnreachable.
func (s *Sim) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// HoldCollidingGroup puts a foreign group at path: it holds projects and does
// not carry the platform's marker, so it cannot be adopted.
func (s *Sim) HoldCollidingGroup(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[path] = &group{path: path, name: path, description: "owned by another team", hasProjects: true}
}

// AddEmptyGroup puts an empty unmarked group at path, which the platform may adopt.
func (s *Sim) AddEmptyGroup(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[path] = &group{path: path, name: path}
}

// Groups returns every group the simulated code host holds, ordered by path.
func (s *Sim) Groups() []resources.VCSGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]resources.VCSGroup, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, *g.view())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Calls returns how many FindGroup and EnsureGroup calls were made, failed ones included.
func (s *Sim) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// FindGroup returns the group at path, or (nil, nil) when none exists.
func (s *Sim) FindGroup(ctx context.Context, path string) (*resources.VCSGroup, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[path]; ok {
		return g.view(), nil
	}
	return nil, nil
}

// EnsureGroup creates the group at path (its description carrying
// resources.ManagedMarker) or adopts an adoptable one already there; a group
// that cannot be adopted gives an error wrapping resources.ErrVCSGroupCollision.
func (s *Sim) EnsureGroup(ctx context.Context, path, name string) (*resources.VCSGroup, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[path]; ok {
		v := g.view()
		if !v.Adoptable {
			return nil, fmt.Errorf("codehostsim: group %q: %w", path, resources.ErrVCSGroupCollision)
		}
		return v, nil
	}
	g := &group{path: path, name: name, description: resources.ManagedMarker}
	s.groups[path] = g
	return g.view(), nil
}

// begin counts a call, consumes an injected failure, and waits the injected
// delay; it returns the fault the call must report, if any.
func (s *Sim) begin(ctx context.Context) error {
	s.mu.Lock()
	s.calls++
	fail := s.unreachable || s.failNext > 0
	if s.failNext > 0 {
		s.failNext--
	}
	delay := s.delay
	s.mu.Unlock()

	if err := wait(ctx, delay); err != nil {
		return fmt.Errorf("codehostsim: %w: %w", resources.ErrCodeHostUnreachable, err)
	}
	if fail {
		return fmt.Errorf("codehostsim: injected fault: %w", resources.ErrCodeHostUnreachable)
	}
	return nil
}

// wait sleeps d, or returns ctx's error as soon as ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

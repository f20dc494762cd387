// Package codehostsim is an in-process simulated code host implementing
// resources.CodeHost, with fault injection for the failure paths the contract
// names. The demo world and the tests use it in place of a real GitLab.
package codehostsim

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"platformapi/resources"
	"platformapi/resources/internal/fault"
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
	fault.Injector // SetUnreachable, FailNext, SetDelay, Calls
	mu             sync.Mutex
	groups         map[string]*group
}

// New returns a reachable simulated code host with no groups and no faults.
func New() *Sim {
	return &Sim{groups: map[string]*group{}}
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

// begin applies the injected faults to a call.
func (s *Sim) begin(ctx context.Context) error {
	return s.Enter(ctx, "codehostsim", resources.ErrCodeHostUnreachable)
}

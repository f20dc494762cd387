package nodeagent

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"platformapi/resources"
)

// reportTTL is how long a node's report (or its silence) serves reads of
// the AI nodes before the agent is asked again: a burst of reads costs
// each agent one request.
const reportTTL = 2 * time.Second

// maxParallelReports bounds the agents asked at once by one Reports call.
const maxParallelReports = 16

// Fleet reaches the agents of the roster's nodes (resources.NodeAgents):
// the endpoint of a node comes from the directory (agent_url and key
// nonce), its key is derived under the pepper, and the client speaks the
// protocol. Reports are kept reportTTL; copies and removals always ask.
type Fleet struct {
	dir    resources.NodeAgentDirectory
	client resources.NodeAgentClient
	pepper resources.Pepper
	now    func() time.Time

	mu      sync.Mutex
	reports map[string]cachedReport
	calls   singleflight.Group
}

// cachedReport is a node's last report, or ok false when it did not answer.
type cachedReport struct {
	report resources.AgentReport
	ok     bool
	at     time.Time
}

// NewFleet builds the fleet over a directory, a client and the pepper the
// node keys derive from.
func NewFleet(dir resources.NodeAgentDirectory, client resources.NodeAgentClient, pepper resources.Pepper) *Fleet {
	return &Fleet{dir: dir, client: client, pepper: pepper, now: time.Now, reports: map[string]cachedReport{}}
}

// endpoints looks up the enrolled nodes among hostnames (nil: all).
func (f *Fleet) endpoints(ctx context.Context, hostnames []string) ([]resources.AgentEndpoint, error) {
	enrolled, err := f.dir.NodeAgentEnrolments(ctx, hostnames)
	if err != nil {
		return nil, err
	}
	out := make([]resources.AgentEndpoint, len(enrolled))
	for i, e := range enrolled {
		out[i] = resources.AgentEndpoint{Hostname: e.Hostname, URL: e.URL,
			Key: resources.DeriveNodeKey(f.pepper, e.Hostname, e.KeyNonce)}
	}
	return out, nil
}

// endpoint is one node's endpoint, or CodeNodeAgentNotEnrolled.
func (f *Fleet) endpoint(ctx context.Context, hostname string) (resources.AgentEndpoint, error) {
	eps, err := f.endpoints(ctx, []string{hostname})
	if err != nil {
		return resources.AgentEndpoint{}, err
	}
	if len(eps) == 0 {
		return resources.AgentEndpoint{}, resources.NotEnrolled(hostname)
	}
	return eps[0], nil
}

// Report asks the node's agent now (and keeps the answer for Reports).
func (f *Fleet) Report(ctx context.Context, hostname string) (resources.AgentReport, error) {
	ep, err := f.endpoint(ctx, hostname)
	if err != nil {
		return resources.AgentReport{}, err
	}
	return f.ask(ctx, ep)
}

// ask gets one report and remembers it (or the silence).
func (f *Fleet) ask(ctx context.Context, ep resources.AgentEndpoint) (resources.AgentReport, error) {
	rep, err := f.client.Report(ctx, ep)
	f.mu.Lock()
	f.reports[ep.Hostname] = cachedReport{report: rep, ok: err == nil, at: f.now()}
	f.mu.Unlock()
	return rep, err
}

// Reports asks the enrolled agents among hostnames (nil: all enrolled
// nodes), each at most once per reportTTL, the whole call bounded by
// resources.MonitoringTimeout: the answers, and the agents that gave none.
func (f *Fleet) Reports(ctx context.Context, hostnames []string) resources.AgentReports {
	ctx, cancel := context.WithTimeout(ctx, resources.MonitoringTimeout)
	defer cancel()
	out := resources.AgentReports{Answered: map[string]resources.AgentReport{}, Silent: map[string]bool{}}
	eps, err := f.endpoints(ctx, hostnames)
	if err != nil {
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxParallelReports)
	for _, ep := range eps {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			rep, ok := f.recent(ctx, ep)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				out.Answered[ep.Hostname] = rep
			} else {
				out.Silent[ep.Hostname] = true
			}
		})
	}
	wg.Wait()
	return out
}

// recent is the node's report younger than reportTTL, asking the agent
// (once, however many callers wait) when there is none.
func (f *Fleet) recent(ctx context.Context, ep resources.AgentEndpoint) (resources.AgentReport, bool) {
	f.mu.Lock()
	c, seen := f.reports[ep.Hostname]
	f.mu.Unlock()
	if seen && f.now().Sub(c.at) < reportTTL {
		return c.report, c.ok
	}
	ch := f.calls.DoChan(ep.Hostname, func() (any, error) {
		// not this caller's context: another may be waiting for the answer
		ask, cancel := context.WithTimeout(context.WithoutCancel(ctx), resources.MonitoringTimeout)
		defer cancel()
		return f.ask(ask, ep)
	})
	select {
	case r := <-ch:
		return r.Val.(resources.AgentReport), r.Err == nil
	case <-ctx.Done():
		return resources.AgentReport{}, false
	}
}

// Copy asks the node's agent to copy repo from source.
func (f *Fleet) Copy(ctx context.Context, hostname, repo, source string) (resources.AgentCache, error) {
	ep, err := f.endpoint(ctx, hostname)
	if err != nil {
		return resources.AgentCache{}, err
	}
	return f.client.Copy(ctx, ep, repo, source)
}

// Remove asks the node's agent to remove repo's cache.
func (f *Fleet) Remove(ctx context.Context, hostname, repo string) error {
	ep, err := f.endpoint(ctx, hostname)
	if err != nil {
		return err
	}
	return f.client.Remove(ctx, ep, repo)
}

var _ resources.NodeAgents = (*Fleet)(nil)

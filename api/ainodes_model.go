package api

import (
	"context"
	"regexp"
	"slices"

	"platformapi/resources"
)

var catalogueID = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)

// hostsWithModel lists the nodes that serve the model live (per the
// snapshot) or hold a node cache of it (copying, ready or removing; not one
// their agent no longer reports). model
// is a catalogue id (an unknown one is 404 ai_model_not_found) or a repo
// (matched exactly; it need not be in the catalogue to be served).
func (s *Server) hostsWithModel(ctx context.Context, snap resources.NodeSnapshot, model string) ([]string, error) {
	repo, f := model, resources.NodeCacheFilter{}
	if catalogueID.MatchString(model) {
		m, err := s.svc.AIModels.GetAIModel(ctx, parseID(model))
		if err != nil {
			return nil, err
		}
		repo, f.ModelID = m.Repo, m.ID
	}
	hosts := []string{}
	for h, live := range snap {
		if slices.ContainsFunc(live.Models, func(m resources.NodeModel) bool { return m.Repo != nil && *m.Repo == repo }) {
			hosts = append(hosts, h)
		}
	}
	q := resources.PageQuery{Limit: resources.MaxPageLimit}
	for {
		pg, err := s.svc.NodeCaches.ListNodeCaches(ctx, f, q)
		if err != nil {
			return nil, err
		}
		for _, c := range pg.Items {
			if c.ModelRepo == repo && c.Status != resources.NodeCacheMissing && !slices.Contains(hosts, c.Hostname) {
				hosts = append(hosts, c.Hostname)
			}
		}
		if pg.Next == nil {
			return hosts, nil
		}
		q.After = pg.Next
	}
}

// intersectHosts keeps the hosts of a that b holds too; nil means no
// restriction.
func intersectHosts(a, b []string) []string {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return slices.DeleteFunc(slices.Clone(a), func(h string) bool { return !slices.Contains(b, h) })
}

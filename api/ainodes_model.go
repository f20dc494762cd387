package api

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"platformapi/resources"
)

var catalogueID = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)

// hostsWithModel lists the nodes that serve the model live (per the
// snapshot) or hold a node cache of it (copying, ready or removing; not one
// their agent no longer reports). model is a catalogue id (an unknown one
// is 404 ai_model_not_found), a repo (matched exactly; it need not be in
// the catalogue to be served) or, without a slash, a served model name
// (an item's models[].model): the nodes serving it under that name, and
// the caches of the repos it is served from.
func (s *Server) hostsWithModel(ctx context.Context, snap resources.NodeSnapshot, model string) ([]string, error) {
	repos, served, f := []string{model}, "", resources.NodeCacheFilter{}
	switch {
	case catalogueID.MatchString(model):
		m, err := s.svc.AIModels.GetAIModel(ctx, parseID(model))
		if err != nil {
			return nil, err
		}
		repos, f.ModelID = []string{m.Repo}, m.ID
	case !strings.Contains(model, "/"):
		served, repos = model, servedRepos(snap, model)
	}
	hosts := []string{}
	for h, live := range snap {
		if slices.ContainsFunc(live.Models, func(m resources.NodeModel) bool {
			return served != "" && m.Model == served || m.Repo != nil && slices.Contains(repos, *m.Repo)
		}) {
			hosts = append(hosts, h)
		}
	}
	if len(repos) == 0 {
		return hosts, nil
	}
	return s.addCachingHosts(ctx, hosts, repos, f)
}

// servedRepos are the repos the live snapshot says the served model name
// is served from.
func servedRepos(snap resources.NodeSnapshot, served string) []string {
	var repos []string
	for _, live := range snap {
		for _, m := range live.Models {
			if m.Model == served && m.Repo != nil && !slices.Contains(repos, *m.Repo) {
				repos = append(repos, *m.Repo)
			}
		}
	}
	return repos
}

// addCachingHosts adds to hosts the nodes holding a node cache (filtered
// by f) of one of repos that their agent still reports.
func (s *Server) addCachingHosts(ctx context.Context, hosts, repos []string,
	f resources.NodeCacheFilter) ([]string, error) {
	q := resources.PageQuery{Limit: resources.MaxPageLimit}
	for {
		pg, err := s.svc.NodeCaches.ListNodeCaches(ctx, f, q)
		if err != nil {
			return nil, err
		}
		for _, c := range pg.Items {
			if slices.Contains(repos, c.ModelRepo) && c.Status != resources.NodeCacheMissing &&
				!slices.Contains(hosts, c.Hostname) {
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

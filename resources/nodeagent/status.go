package nodeagent

import (
	"slices"
	"strings"

	"platformapi/resources"
)

// fsStats is the cache file system's total and available bytes.
func (a *Agent) fsStats() (resources.AgentFS, error) {
	f, err := a.cache.Open(".")
	if err != nil {
		return resources.AgentFS{}, wrapf("open the cache root", err)
	}
	defer f.Close()
	total, avail, err := statfs(f)
	return resources.AgentFS{TotalBytes: total, FreeBytes: avail}, err
}

// report is the whole status: the file system, the cap, the bytes used
// and every cache — published (ready, or verifying, corrupt or
// unverifiable when found on disk), running or queued, failed, or left
// unfinished by an agent that stopped. It never waits for a check.
func (a *Agent) report() (resources.AgentReport, error) {
	fsys, err := a.fsStats()
	if err != nil {
		return resources.AgentReport{}, err
	}
	r := resources.AgentReport{FS: fsys, UsedBytes: a.usedBytes(), Caches: []resources.AgentCache{}}
	if a.maxCache > 0 {
		r.MaxCacheBytes = &a.maxCache
	}
	jobs := a.currentJobs()
	byRepo := a.onDisk(jobs)
	a.mu.Lock()
	for repo, c := range a.failed {
		byRepo[repo] = c
	}
	a.mu.Unlock()
	for _, j := range jobs {
		byRepo[j.repo] = j.snapshot(a.hostPath(j.repo))
	}
	for _, c := range byRepo {
		r.Caches = append(r.Caches, c)
	}
	slices.SortFunc(r.Caches, func(x, y resources.AgentCache) int {
		return strings.Compare(x.Repo, y.Repo)
	})
	return r, nil
}

// onDisk reads the partial and the published caches by repo; a published
// directory that one of jobs is copying into place is not read (its copy
// stands for it).
func (a *Agent) onDisk(jobs []*job) map[string]resources.AgentCache {
	byRepo := map[string]resources.AgentCache{}
	for _, repo := range a.listRepos(partialDir) {
		if c := a.readPartial(repo); c != nil {
			byRepo[repo] = *c
		}
	}
	copying := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		copying[j.repo] = true
	}
	for _, repo := range a.listRepos(".") {
		if copying[repo] {
			continue
		}
		if c := a.readReady(repo); c != nil {
			byRepo[repo] = *c
		}
	}
	return byRepo
}

// lookup is one cache: running or queued, failed, published, or left
// unfinished; nil when the agent holds nothing of repo.
func (a *Agent) lookup(repo string) *resources.AgentCache {
	a.mu.Lock()
	j := a.jobs[repo]
	f, failed := a.failed[repo]
	a.mu.Unlock()
	switch {
	case j != nil:
		c := j.snapshot(a.hostPath(repo))
		return &c
	case failed:
		return &f
	}
	if c := a.readReady(repo); c != nil {
		return c
	}
	return a.readPartial(repo)
}

// checkRoom refuses the copy of p when what it still needs (the files not
// verified in kept) does not fit: in the file system's available bytes,
// nor under the cap beside what the cache root holds less the directory
// standing in the cache's place (corrupt, or of another central copy: the
// copy replaces it, removed at publication); both less what the other
// copies still need. On the file system both exist until publication, so
// there the directory counts. Nothing is written before it passes.
func (a *Agent) checkRoom(repo string, p *plan, kept []entry) error {
	needed := p.total
	for _, e := range kept {
		needed -= e.Size
	}
	fsys, err := a.fsStats()
	if err != nil {
		return err
	}
	reserved := a.reserved()
	free, capBytes := fsys.FreeBytes-reserved, int64(0)
	if a.maxCache > 0 {
		if room := a.maxCache - (a.usedBytes() - a.replaced(repo)) - reserved; room < free {
			free, capBytes = room, a.maxCache
		}
	}
	free = max(free, 0)
	if needed > free {
		return insufficientDisk(repo, needed, free, capBytes)
	}
	return nil
}

// reserved is what the copies under way still have to write.
func (a *Agent) reserved() int64 {
	var n int64
	for _, j := range a.currentJobs() {
		j.mu.Lock()
		n += max(j.plan.total-j.verified-j.inflight, 0)
		j.mu.Unlock()
	}
	return n
}

// currentJobs lists the copies running or queued.
func (a *Agent) currentJobs() []*job {
	a.mu.Lock()
	defer a.mu.Unlock()
	jobs := make([]*job, 0, len(a.jobs))
	for _, j := range a.jobs {
		jobs = append(jobs, j)
	}
	return jobs
}

package bunstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// TestDiskOf_StateOfANewerAgent_PresentNotReady: an agent upgraded before
// the servers may report a cache state this release does not know; the
// cache is on the node, so it counts as present (not verified): a recorded
// cache is not turned missing for it, nor adopted. A failed copy is no
// cache on the node, as before.
func TestDiskOf_StateOfANewerAgent_PresentNotReady(t *testing.T) {
	got := diskOf(resources.AgentReport{Caches: []resources.AgentCache{
		{Repo: "org/new", State: "pinned"}, {Repo: "org/ready", State: resources.AgentCacheReady},
		{Repo: "org/failed", State: resources.AgentCacheFailed},
	}})
	want := onDisk{ready: map[string]resources.AgentCache{"org/ready": {Repo: "org/ready", State: "ready"}},
		present: map[string]bool{"org/new": true}, corrupt: map[string]resources.AgentCache{}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(onDisk{})); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

package api

import (
	"testing"

	"platformapi/resources"
)

// TestCursors_FilterDigest_SetsInAnyOrderSameDigest: the digest a cursor
// is bound to takes a multi-value filter as a set (also in an embedded
// filter struct) and still tells different filters apart; the caller's
// values are left in the order given.
func TestCursors_FilterDigest_SetsInAnyOrderSameDigest(t *testing.T) {
	t.Parallel()
	key := func(site string, status ...string) nodeListKey {
		return nodeListKey{AINodeFilter: resources.AINodeFilter{Site: site}, Status: status,
			Health: []string{"stale", "ok"}}
	}
	asked := key("ber", "serving", "idle")
	for _, c := range []struct {
		name string
		a, b any
		same bool
	}{
		{"order", asked, key("ber", "idle", "serving"), true},
		{"other value", asked, key("ber", "idle", "offline"), false},
		{"other site", asked, key("muc", "idle", "serving"), false},
		{"one value fewer", asked, key("ber", "idle"), false},
		{"nil twice", nil, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := filterDigest(c.a) == filterDigest(c.b); got != c.same {
				t.Fatalf("same digest %v, want %v", got, c.same)
			}
		})
	}
	if asked.Status[0] != "serving" || asked.Health[0] != "stale" {
		t.Fatalf("the caller's filters were sorted in place: %v", asked)
	}
}

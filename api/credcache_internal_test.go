package api

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// A load that started before an invalidation may predate the change: it is
// not kept, so the next request reads the database again.
func TestCredentialCache_LoadOvertakenByInvalidation_NotKept(t *testing.T) {
	c := NewCredentialCache(time.Hour, nil, nil)
	cred := &resources.Credential{Token: resources.APIToken{ID: 7}}
	gen := c.generation()
	c.Changed(resources.TokenChanged(7))
	c.put("h", cred, gen, time.Now())
	if _, ok := c.get("h"); ok {
		t.Fatal("a load older than an invalidation was cached")
	}
	c.put("h", cred, c.generation(), time.Now())
	if _, ok := c.get("h"); !ok {
		t.Fatal("a current load was not cached")
	}
}

func TestCredentialCache_Changed_DropsOnlyWhatItTouches(t *testing.T) {
	pat := resources.Credential{Token: resources.APIToken{ID: 1},
		Owner: resources.Principal{Kind: resources.PrincipalUser, ID: 10}}
	sat := resources.Credential{Token: resources.APIToken{ID: 2},
		Owner: resources.Principal{Kind: resources.PrincipalServiceAccount, ID: 10}}
	for _, tc := range []struct {
		change  resources.Change
		keptPAT bool
		keptSAT bool
	}{
		{resources.TokenChanged(1), false, true},
		{resources.PrincipalChanged(resources.PrincipalUser, 10), false, true},
		{resources.PrincipalChanged(resources.PrincipalServiceAccount, 10), true, false},
		{resources.Change{Kind: resources.ChangeRoles}, false, false},
		{resources.Change{Kind: "something-new"}, false, false},
		{resources.Change{Kind: resources.ChangeAPISwitch}, true, true},
	} {
		t.Run(tc.change.Kind, func(t *testing.T) {
			c := NewCredentialCache(time.Hour, nil, nil)
			c.put("pat", &pat, c.generation(), time.Now())
			c.put("sat", &sat, c.generation(), time.Now())
			c.Changed(tc.change)
			_, p := c.get("pat")
			_, s := c.get("sat")
			if p != tc.keptPAT || s != tc.keptSAT {
				t.Fatalf("kept pat=%v sat=%v, want %v %v", p, s, tc.keptPAT, tc.keptSAT)
			}
		})
	}
}

// Stale entries are dropped once per re-check interval, not only when the
// cache is full: it holds about the tokens used within the last interval.
func TestCredentialCache_StaleEntriesDroppedEachInterval(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c := NewCredentialCache(30*time.Second, func() time.Time { return now }, nil)
	for _, h := range []string{"a", "b"} {
		c.put(h, &resources.Credential{}, c.generation(), now)
	}
	now = now.Add(30 * time.Second)
	c.put("c", &resources.Credential{}, c.generation(), now)
	if got := len(c.entries); got != 1 {
		t.Fatalf("%d entries after an interval, want 1 (the fresh one)", got)
	}
	now = now.Add(10 * time.Second)
	c.put("d", &resources.Credential{}, c.generation(), now) // within the interval: no sweep
	if _, ok := c.get("c"); !ok || len(c.entries) != 2 {
		t.Fatalf("entries within the interval: %d, c kept %v", len(c.entries), ok)
	}
}

// A token's use is written at most once per touchInterval; entries older
// than that are forgotten, and the token's own record still counts.
func TestTouchLog_OncePerInterval_ForgetsOldTokens(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	recent := t0.Add(-time.Second)
	var l touchLog
	l.at = map[int64]time.Time{}
	steps := []struct {
		id   int64
		last *time.Time
		at   time.Time
		want bool
	}{
		{1, nil, t0, true},
		{1, nil, t0.Add(time.Second), false},
		{2, &recent, t0, false}, // its record says it was just written
		{2, nil, t0.Add(2 * time.Second), true},
		{3, nil, t0.Add(touchInterval + time.Second), true}, // sweeps 1, not 2
		{1, nil, t0.Add(touchInterval + 2*time.Second), true},
		{2, nil, t0.Add(touchInterval + time.Second), false},
	}
	for i, s := range steps {
		if got := l.due(s.id, s.last, s.at); got != s.want {
			t.Fatalf("step %d (token %d at %v): due %v, want %v", i, s.id, s.at, got, s.want)
		}
		if i == 4 {
			if _, kept := l.at[1]; kept || len(l.at) != 2 {
				t.Fatalf("after the sweep: %v", l.at)
			}
		}
	}
}

// Cached credentials with the same key set hold one shared slice of it
// (as the catalogue's strings are shared): 2,000 tokens of one service
// account kept 2,000 copies of the same 19 keys. A shared slice's
// capacity is its length, so an append copies; other key sets stay apart.
func TestCredentialCache_SameKeySetsShareOneSlice(t *testing.T) {
	c := NewCredentialCache(time.Hour, nil, nil)
	cred := func(id int64, scopes ...string) *resources.Credential {
		room := append(make([]string, 0, 8), scopes...) // a read's slice may have spare room
		return &resources.Credential{Token: resources.APIToken{ID: id, Scopes: room},
			Owner: resources.Principal{ID: 1, Permissions: []string{resources.PermAIRead, resources.PermAuditRead}}}
	}
	c.put("a", cred(1, resources.PermAIRead), c.generation(), time.Now())
	c.put("b", cred(2, resources.PermAIRead), c.generation(), time.Now())
	c.put("c", cred(3, resources.PermAuditRead), c.generation(), time.Now())
	a, _ := c.get("a")
	b, _ := c.get("b")
	other, _ := c.get("c")
	if &a.Token.Scopes[0] != &b.Token.Scopes[0] || &a.Owner.Permissions[0] != &b.Owner.Permissions[0] {
		t.Fatal("two credentials with the same key sets hold separate copies")
	}
	if &a.Owner.Permissions[0] != &other.Owner.Permissions[0] || &a.Token.Scopes[0] == &other.Token.Scopes[0] {
		t.Fatal("key sets are not shared by content")
	}
	if cap(a.Token.Scopes) != len(a.Token.Scopes) {
		t.Fatalf("a shared set has room to append into: cap %d, len %d", cap(a.Token.Scopes), len(a.Token.Scopes))
	}
	want := []string{resources.PermAuditRead}
	if diff := cmp.Diff(want, other.Token.Scopes); diff != "" {
		t.Fatalf("scopes (-want +got)\n%s", diff)
	}
}

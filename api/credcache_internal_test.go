package api

import (
	"testing"
	"time"

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

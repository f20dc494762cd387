package app

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore/pgtest"
)

// demoSteps are the instants of the demo history, oldest first, as how long
// before the clock's instant each happens.
var demoSteps = []time.Duration{31 * day, 30 * day, 21 * day, 14 * day, 10 * day, 7 * day,
	3 * day, 2 * day, 26 * hour, 5 * hour, 3 * hour}

// TestDemoHistory_LaidOutBeforeTheClockFrozenOrNot: `serve --demo` lays the
// history out before the clock in force — the frozen instant, or the real
// time of the build — step by step (audit events, created_at, token
// expiries from their mint date), and afterwards the clocks are back: a
// write lands at the frozen instant, or at the real time.
func TestDemoHistory_LaidOutBeforeTheClockFrozenOrNot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frozen time.Time
	}{{"frozen clock", DefaultEvalClock}, {"real clock", time.Time{}}} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now().Truncate(time.Second)
			d := startDemo(t, pgtest.DSN(t), tc.frozen)
			built := time.Now()
			events := d.all("/audit-events", url.Values{"limit": {"500"}})
			slices.Reverse(events) // oldest first
			base := timeOf(t, events[0]["occurred_at"]).Add(31 * day)
			if !tc.frozen.IsZero() && !base.Equal(tc.frozen) {
				t.Fatalf("history leads up to %v, want the frozen instant %v", base, tc.frozen)
			}
			if tc.frozen.IsZero() && (base.Before(start) || base.After(built)) {
				t.Fatalf("history leads up to %v, want the real time of the build (%v to %v)",
					base, start, built)
			}
			checkSteps(t, events, base)
			checkCustomersCreated(t, d, base)
			checkTokenExpiries(t, d, base)
			checkClockBack(t, d, tc.frozen)
		})
	}
}

// checkSteps: the audit events before base fall on the history's steps,
// in order.
func checkSteps(t *testing.T, events []map[string]any, base time.Time) {
	t.Helper()
	var steps []time.Duration
	for _, e := range events {
		at := timeOf(t, e["occurred_at"])
		if before := base.Sub(at); before > 0 && (len(steps) == 0 || steps[len(steps)-1] != before) {
			steps = append(steps, before)
		}
	}
	if diff := cmp.Diff(demoSteps, steps); diff != "" {
		t.Fatalf("history steps before the clock (-want +got)\n%s", diff)
	}
}

// checkCustomersCreated: Mara created the customers three weeks back.
func checkCustomersCreated(t *testing.T, d *demoServer, base time.Time) {
	t.Helper()
	got := map[string]time.Duration{}
	for _, c := range d.all("/customers", url.Values{}) {
		got[c["short_name"].(string)] = base.Sub(timeOf(t, c["created_at"]))
	}
	want := map[string]time.Duration{"ACME": 21 * day, "GLOBEX": 21 * day, "INITECH": 21 * day,
		"UMBRELLA": 21 * day, "HOOLI": 21 * day}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("customers created before the clock (-want +got)\n%s", diff)
	}
}

// tokenTimes are a token's mint date and expiry relative to the clock's
// instant, and its expiry warning.
type tokenTimes struct {
	Minted, Expires time.Duration
	Warning         any
}

// checkTokenExpiries: the history's active tokens were minted a month back
// and expire their lifetime later, three of them within two weeks.
func checkTokenExpiries(t *testing.T, d *demoServer, base time.Time) {
	t.Helper()
	got := map[string]tokenTimes{}
	for _, tok := range d.all("/api-tokens", url.Values{"status": {"active"}}) {
		if minted := timeOf(t, tok["created_at"]); minted.Before(base) {
			got[tok["name"].(string)] = tokenTimes{Minted: base.Sub(minted),
				Expires: timeOf(t, tok["expires_at"]).Sub(base), Warning: tok["expiry_warning"]}
		}
	}
	want := map[string]tokenTimes{
		"admin ci":                {30 * day, 60 * day, nil},
		"mara tenancy automation": {30 * day, 30 * day, nil},
		"jonas release bot":       {30 * day, 5 * day, "14d"},
		"li model sync":           {30 * day, 3 * day, "3d"},
		"siem export":             {30 * day, 2 * day, "3d"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("history tokens (-want +got)\n%s", diff)
	}
}

// checkClockBack: a write after the build is recorded at the frozen
// instant, or at the real time (the database's clock too).
func checkClockBack(t *testing.T, d *demoServer, frozen time.Time) {
	t.Helper()
	hooli := d.all("/customers", url.Values{"short_name": {"HOOLI"}})[0]["id"].(string)
	before := time.Now()
	patched := d.call(http.MethodPatch, "/customers/"+hooli, map[string]any{"notes": "Met."})
	updated := timeOf(t, patched["updated_at"])
	event := d.all("/audit-events", url.Values{"entity_id": {hooli}, "action": {"customer.update"},
		"limit": {"1"}})[0]
	occurred, after := timeOf(t, event["occurred_at"]), time.Now()
	for name, at := range map[string]time.Time{"updated_at": updated, "audit occurred_at": occurred} {
		if !frozen.IsZero() && !at.Equal(frozen) {
			t.Errorf("%s %v, want the frozen instant %v", name, at, frozen)
		}
		if frozen.IsZero() && (at.Before(before.Add(-time.Millisecond)) || at.After(after)) {
			t.Errorf("%s %v, want the real time (%v to %v)", name, at, before, after)
		}
	}
}

// TestDemoWorld_BuiltOnceRestartWritesOnTheRealClock: a second `serve
// --demo` on the same database, now without --frozen-clock, keeps the
// history as it was (no step again) and writes what it does at start (the
// roster import, the admin token) at the real time: the frozen clock the
// first run left in the database is gone.
func TestDemoWorld_BuiltOnceRestartWritesOnTheRealClock(t *testing.T) {
	dsn := pgtest.DSN(t)
	first := startDemo(t, dsn, DefaultEvalClock)
	history := first.all("/audit-events", url.Values{"limit": {"500"}})
	start := time.Now()
	second := startDemo(t, dsn, time.Time{})
	end := time.Now()
	events := second.all("/audit-events", url.Values{"limit": {"500"}})
	if diff := cmp.Diff(history, events[len(events)-len(history):]); diff != "" {
		t.Fatalf("the history changed on restart (-before +after)\n%s", diff)
	}
	var actions []string
	for _, e := range events[:len(events)-len(history)] {
		actions = append(actions, e["action"].(string))
		if at := timeOf(t, e["occurred_at"]); at.Before(start) || at.After(end) {
			t.Errorf("%s at %v, want the real time of the restart (%v to %v)", e["action"], at, start, end)
		}
	}
	want := []string{"api_token.create", "ai_node.inventory_import"} // newest first
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Fatalf("written at restart (-want +got)\n%s", diff)
	}
}

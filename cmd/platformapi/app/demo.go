package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"platformapi/bunstore"
	"platformapi/resources"
)

// demoAdmin is the person --demo sets up.
const demoAdmin = "admin@demo.example"

// setupDemo builds the demo world (see buildDemo) and prints a fresh admin
// token once.
func (m *Main) setupDemo(ctx context.Context, h http.Handler, out io.Writer) error {
	t, err := m.buildDemo(ctx, h)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"demo_admin": demoAdmin, "token_id": fmt.Sprint(t.Token.ID),
		"token": t.Value, "expires_at": t.Token.ExpiresAt})
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// buildDemo makes sure the demo world is loaded, then mints a fresh admin
// token holding every token scope. The first time it builds the world as a
// month of history leading up to the clock's instant (loadDemo, with the
// clocks held by holdDemoClock). Running it again finds the history built
// and only makes sure of the basics (reloadDemo).
func (m *Main) buildDemo(ctx context.Context, h http.Handler) (resources.MintedToken, error) {
	built, err := m.demoBuilt(ctx)
	switch {
	case err != nil:
	case built:
		err = m.reloadDemo(ctx)
	default:
		err = m.inDemoPast(ctx, func(ctx context.Context) error { return m.loadDemo(ctx, h) })
	}
	if err != nil {
		return resources.MintedToken{}, err
	}
	return m.Portal().CreateToken(ctx, resources.Actor{Label: demoAdmin}, resources.NewToken{Name: "demo admin",
		Scopes: allTokenScopes(), Days: resources.TokenDefaultDays, AllowDestroy: true})

}

// loadDemo builds the world: a month back the demo administrator, the API
// switch, the demo licence, the AI node roster and catalogue rows
// (loadDemoBasics), then the rest of the history (loadDemoHistory). The
// caller holds the clocks.
func (m *Main) loadDemo(ctx context.Context, h http.Handler) error {
	if err := m.demoAt(ctx, 31*day); err != nil {
		return err
	}
	if err := m.loadDemoBasics(ctx); err != nil {
		return err
	}
	return m.loadDemoHistory(ctx, h)
}

// reloadDemo makes sure of the basics of a world built before
// (loadDemoBasics), now. Without --frozen-clock it first removes a frozen
// clock an earlier run with the flag left in the database, so that this
// run writes on the real clock.
func (m *Main) reloadDemo(ctx context.Context) error {
	if m.clock.Load() == nil {
		if err := bunstore.ThawClock(ctx, m.db); err != nil {
			return err
		}
	}
	return m.loadDemoBasics(ctx)
}

// demoBuilt reports whether the demo history was built: its first step
// creates the role operator.
func (m *Main) demoBuilt(ctx context.Context) (bool, error) {
	var built bool
	err := m.db.NewRaw("SELECT EXISTS (SELECT 1 FROM roles WHERE name = 'operator')").Scan(ctx, &built)
	if err != nil {
		return false, fmt.Errorf("demo world: looking for its history: %w", err)
	}
	return built, nil
}

// loadDemoBasics makes sure, idempotently, that the demo administrator
// exists, the API is on, a licence is installed (the demo licence unless a
// valid one is) and the demo AI node roster and catalogue rows are loaded.
func (m *Main) loadDemoBasics(ctx context.Context) error {
	p := m.Portal()
	_, err := p.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: demoAdmin,
		DisplayName: "Demo Administrator", Roles: []string{"admin"}})

	if e, ok := resources.AsError(err); ok && e.Code == resources.CodeEmailTaken {
		err = nil
	}
	if err != nil {
		return err
	}
	if _, err := p.SetAPIEnabled(ctx, resources.Actor{Label: demoAdmin}, true); err != nil {
		return err
	}
	if err := m.installDemoLicence(ctx); err != nil {
		return err
	}
	if err := m.loadDemoWorld(ctx); err != nil {
		return err
	}
	return m.startDemoFleet(ctx)
}

// allTokenScopes are the permission keys a token may hold.
func allTokenScopes() []string {
	var scopes []string
	for _, perm := range resources.Permissions() {
		if resources.TokenAllowed(perm.Key) {
			scopes = append(scopes, perm.Key)
		}
	}
	return scopes
}

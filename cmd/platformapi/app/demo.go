package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

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

// buildDemo makes sure the demo administrator exists, the API is on, a
// licence is installed (the demo licence unless a valid one is) and
// the demo world is loaded (AI node roster and catalogue rows, then, once,
// its history: people, customers, projects, releases, caches, keys,
// tokens), then mints a fresh admin token holding every token scope.
// Running it again reuses all of it and mints another token.
func (m *Main) buildDemo(ctx context.Context, h http.Handler) (resources.MintedToken, error) {
	p := m.Portal()
	if err := m.demoAt(ctx, 31*day); err != nil { // the history starts a month back
		return resources.MintedToken{}, err
	}
	_, err := p.CreateUser(ctx, "", resources.NewUser{Email: demoAdmin, DisplayName: "Demo Administrator", Roles: []string{"admin"}})
	if e, ok := resources.AsError(err); ok && e.Code == resources.CodeEmailTaken {
		err = nil
	}
	if err != nil {
		return resources.MintedToken{}, err
	}
	if _, err := p.SetAPIEnabled(ctx, demoAdmin, true); err != nil {
		return resources.MintedToken{}, err
	}
	if err := m.installDemoLicence(ctx); err != nil {
		return resources.MintedToken{}, err
	}
	if err := m.loadDemoWorld(ctx); err != nil {
		return resources.MintedToken{}, err
	}
	if err := m.startDemoFleet(ctx); err != nil {
		return resources.MintedToken{}, err
	}
	if err := m.loadDemoHistory(ctx, h); err != nil {
		return resources.MintedToken{}, err
	}
	if err := m.demoAt(ctx, 0); err != nil {
		return resources.MintedToken{}, err
	}
	return p.CreateToken(ctx, demoAdmin, resources.NewToken{Name: "demo admin", Scopes: allTokenScopes(),
		Days: resources.TokenDefaultDays, AllowDestroy: true})
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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"platformapi/resources"
)

// demoAdmin is the person --demo sets up.
const demoAdmin = "admin@demo.example"

// setupDemo makes sure the demo administrator exists, the API is on and the
// demo world (AI node roster, catalogue rows) is loaded, then mints a fresh
// admin token and prints it once. Running it again reuses all of it and
// mints another token.
func (m *Main) setupDemo(ctx context.Context, out io.Writer) error {
	p := m.Portal()
	_, err := p.CreateUser(ctx, "", resources.NewUser{Email: demoAdmin, DisplayName: "Demo Administrator", Roles: []string{"admin"}})
	if e, ok := resources.AsError(err); ok && e.Code == resources.CodeEmailTaken {
		err = nil
	}
	if err != nil {
		return err
	}
	if _, err := p.SetAPIEnabled(ctx, demoAdmin, true); err != nil {
		return err
	}
	if err := m.loadDemoWorld(ctx); err != nil {
		return err
	}
	var scopes []string
	for _, perm := range resources.Permissions() {
		if resources.TokenAllowed(perm.Key) {
			scopes = append(scopes, perm.Key)
		}
	}
	t, err := p.CreateToken(ctx, demoAdmin, resources.NewToken{Name: "demo admin", Scopes: scopes,
		Days: resources.TokenDefaultDays, AllowDestroy: true})
	if err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"demo_admin": demoAdmin, "token_id": fmt.Sprint(t.Token.ID),
		"token": t.Value, "expires_at": t.Token.ExpiresAt})
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

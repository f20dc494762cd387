package app

import (
	"context"
	"net/http"
	"time"

	"platformapi/bunstore"
	"platformapi/resources"
	"platformapi/resources/pipelinesim"
)

// The people of the demo world besides the administrator.
const (
	demoMara  = "mara.keller@demo.example" // operator: customers and projects
	demoJonas = "jonas.berg@demo.example"  // release manager
	demoLi    = "li.wei@demo.example"      // AI engineer: models, caches, gateway keys
)

const (
	hour = time.Hour
	day  = 24 * hour
)

// demoWorld is the state of a history build: a caller per person and the
// ids of what they made.
type demoWorld struct {
	m                *Main
	admin, mara, jon demoCaller
	li               demoCaller
	sim              *pipelinesim.Sim
	ids              map[string]string
}

// loadDemoHistory builds, once, the demo world's last month: people and
// their tokens, customers (two of them suspended) and their projects,
// models with central copies and node caches, gateway keys, release
// history with a prod promotion awaiting approval. Everything goes through
// the API as its person, with a worker of its own that provisions at once
// and a simulated pipeline reporting at once, one step after the other, so
// that ids and order are the same on every build. Each step happens at its
// instant before the clock's (demoAt; the caller holds the clock). Its
// first write, the role operator, marks the history built (demoBuilt).
func (m *Main) loadDemoHistory(ctx context.Context, h http.Handler) error {
	if _, err := m.Portal().CreateRole(ctx, resources.Actor{}, resources.Role{Name: "operator",
		Description: "Customers, projects and the fleet.", Permissions: operatorKeys}); err != nil {
		return err
	}
	sim := pipelinesim.New(m.store, 0, pipelinesim.WithLogger(m.opts.Logger))
	defer sim.Close()
	w, err := m.store.NewWorker(bunstore.WorkerConfig{Pipeline: sim, PollInterval: 10 * time.Millisecond,
		Logger: m.opts.Logger, Agents: m.fleet, AgentPolicy: bunstore.AgentPolicy{Poll: 20 * time.Millisecond},
		ReconcileInterval: -1}) // the story's moment only; the server's worker reconciles
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	// Cancelled, not awaited: the copy onto the lab VM goes on under the
	// server's own worker.
	defer func() { _ = w.StopAndCancel(context.WithoutCancel(ctx)) }()
	d := &demoWorld{m: m, sim: sim, ids: map[string]string{}}
	for _, step := range []func(context.Context, http.Handler) error{d.people, d.tenancy, d.models, d.releases, d.lastDays} {
		if err := step(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

var (
	operatorKeys = []string{resources.PermTenancyWrite, resources.PermTenancyRead, resources.PermProjectsWrite,
		resources.PermProjectsRead, resources.PermAuditRead, resources.PermAIRead, resources.PermAPITokensAdmin,
		resources.PermAPITokensRead, resources.PermReleasesRead}
	releaseKeys = []string{resources.PermReleasesWrite, resources.PermReleasesRead, resources.PermProjectsRead,
		resources.PermTenancyRead, resources.PermAPITokensAdmin}
	aiKeys = []string{resources.PermAIWrite, resources.PermAIRead, resources.PermAIGatewayKeys, resources.PermAPITokensAdmin}
)

// people: roles, people, their tokens (some near expiry) and a service
// account, thirty days back.
func (d *demoWorld) people(ctx context.Context, h http.Handler) error {
	m, p := d.m, d.m.Portal()
	if err := m.demoAt(ctx, 30*day); err != nil {
		return err
	}
	for _, r := range []resources.Role{{Name: "release-manager", Description: "Promotions and approvals.", Permissions: releaseKeys},
		{Name: "ai-engineer", Description: "Models, node caches and gateway keys.", Permissions: aiKeys}} {
		if _, err := p.CreateRole(ctx, resources.Actor{}, r); err != nil {
			return err
		}
	}
	for _, u := range []resources.NewUser{{Email: demoMara, DisplayName: "Mara Keller", Roles: []string{"operator"}},
		{Email: demoJonas, DisplayName: "Jonas Berg", Roles: []string{"release-manager"}},
		{Email: demoLi, DisplayName: "Li Wei", Roles: []string{"ai-engineer"}}} {
		if _, err := p.CreateUser(ctx, resources.Actor{Label: demoAdmin}, u); err != nil {
			return err
		}
	}
	if _, err := p.CreateServiceAccount(ctx, resources.Actor{Label: demoAdmin}, resources.NewServiceAccount{Name: "audit-exporter",
		Description: "Ships the audit log to the SIEM.", Permissions: []string{resources.PermAuditRead}}); err != nil {
		return err
	}
	return d.tokens(ctx, h)
}

// tokens: the people's tokens (three expire within two weeks of the
// clock's instant, one is revoked later) and the service account's.
func (d *demoWorld) tokens(ctx context.Context, h http.Handler) error {
	p := d.m.Portal()
	mint := func(as, name string, days int, scopes []string, sa string) (string, error) {
		t, err := p.CreateToken(ctx, resources.Actor{Label: as}, resources.NewToken{Name: name, Scopes: scopes, Days: days, ServiceAccount: sa,
			AllowDestroy: as == demoLi})

		d.ids["token:"+name] = formatID(t.Token.ID)
		return t.Value, err
	}
	var err error
	steps := []func() error{
		func() (e error) { d.admin.token, e = mint(demoAdmin, "admin ci", 90, allTokenScopes(), ""); return },
		func() (e error) {
			d.mara.token, e = mint(demoMara, "mara tenancy automation", 60, operatorKeys, "")
			return
		},
		func() (e error) { d.jon.token, e = mint(demoJonas, "jonas release bot", 35, releaseKeys, ""); return },
		func() (e error) { d.li.token, e = mint(demoLi, "li model sync", 33, aiKeys, ""); return },
		func() (e error) {
			_, e = mint(demoMara, "mara old laptop", 90, []string{resources.PermAuditRead}, "")
			return
		},
		func() (e error) {
			_, e = mint(demoAdmin, "siem export", 32, []string{resources.PermAuditRead}, "audit-exporter")
			return
		},
	}
	for _, s := range steps {
		if err = s(); err != nil {
			return err
		}
	}
	for _, c := range []*demoCaller{&d.admin, &d.mara, &d.jon, &d.li} {
		c.h = h
	}
	return nil
}

package api_test

import (
	"context"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestUpgrade_ColumnsAddedByANewerRelease_ThisReleaseServesOn: in a rolling
// update the newer release migrates first (the chart's pre-upgrade hook)
// while this release's replicas go on serving, so a column a newer release
// adds to any table must not break this release's reads or writes: every
// answer below 500, connections and cached statements warm from before the
// migration.
func TestUpgrade_ColumnsAddedByANewerRelease_ThisReleaseServesOn(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	all := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "all", Scopes: []string{
		resources.PermTenancyRead, resources.PermTenancyWrite, resources.PermUsersRead, resources.PermAIRead,
		resources.PermAIWrite, resources.PermAIGatewayKeys, resources.PermAuditRead, resources.PermLicenceRead,
		resources.PermBrandRead, resources.PermProjectsRead, resources.PermReleasesRead}})
	model := createModel(t, e, tok, map[string]any{"repo": "Qwen/Qwen3-8B"})["id"].(string)
	exercise := func(round string) {
		t.Helper()
		for _, rq := range [][3]string{
			{"GET", "/api/v1/whoami"}, {"POST", "/api/v1/customers"}, {"GET", "/api/v1/customers"},
			{"GET", "/api/v1/ai/models/" + model}, {"GET", "/api/v1/ai/models"}, {"POST", "/api/v1/ai/models"},
			{"GET", "/api/v1/ai/nodes"}, {"GET", "/api/v1/ai/nodes/gpu-01"}, {"GET", "/api/v1/node-caches"},
			{"GET", "/api/v1/ai/gateway/keys"}, {"GET", "/api/v1/audit-events"}, {"GET", "/api/v1/operations"},
			{"GET", "/api/v1/tenants"}, {"GET", "/api/v1/users"}, {"GET", "/api/v1/projects"},
			{"GET", "/api/v1/brand"}, {"GET", "/api/v1/licence"},
		} {
			var body any
			switch rq[1] {
			case "/api/v1/customers":
				body = acme("short_name", "UP"+round, "long_name", "Upgrade "+round)
			case "/api/v1/ai/models":
				body = map[string]any{"repo": "org/upgrade-" + round}
			}
			if rq[0] == "GET" {
				body = nil
			}
			if r := e.Do(rq[0], rq[1], all, body); r.Status >= 500 {
				t.Errorf("%s: %s %s: %d %s", round, rq[0], rq[1], r.Status, r.Body)
			}
		}
		kr := e.Do("POST", "/api/v1/ai/gateway/keys", all,
			map[string]any{"name": "gw " + round, "tier": "pro", "return_value": true})
		if kr.Status != 201 {
			t.Fatalf("%s: create a gateway key: %d %s", round, kr.Status, kr.Body)
		}
		if r := e.Do("GET", resources.GatewayVerifyPath, kr.JSON(t)["value"].(string), nil); r.Status != 200 {
			t.Errorf("%s: verify: %d %s", round, r.Status, r.Body)
		}
	}
	exercise("before")
	addColumnEverywhere(t, e)
	exercise("after")
}

// addColumnEverywhere adds a column to every table of the schema, as a
// newer release's additive migration would (River's tables excepted: River
// migrates them itself).
func addColumnEverywhere(t *testing.T, e *apitest.Env) {
	t.Helper()
	ctx := context.Background()
	var tables []string
	if err := e.Store.DB().NewRaw("SELECT table_name FROM information_schema.tables WHERE table_schema = "+
		"current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'river%'").
		Scan(ctx, &tables); err != nil || len(tables) < 10 {
		t.Fatalf("tables %v: %v", tables, err)
	}
	for _, table := range tables {
		if _, err := e.Store.DB().ExecContext(ctx, "ALTER TABLE "+table+
			" ADD COLUMN newer_release_note text DEFAULT 'from a newer release'"); err != nil {
			t.Fatal(err)
		}
	}
}

package main

import (
	"testing"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A reused bench database holds the tokens of this run alone: the memory
// load counts 2,000 live tokens, and each run's pools (a day's life each)
// would otherwise pile up — 40,000 after a day of runs.
func TestClean_DropsEarlierRunsTokensKeepsOthers(t *testing.T) {
	ctx := t.Context()
	w := &world{db: pgtest.DB(t)}
	w.store = bunstore.NewStore(w.db)
	w.minter = bunstore.TokenMinter{Store: w.store, Pepper: resources.Pepper(pepper)}
	if _, err := w.minter.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: adminMail,
		DisplayName: "Bench", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tokens(ctx, 3); err != nil { // an earlier run's pool
		t.Fatal(err)
	}
	if _, err := w.minter.CreateToken(ctx, resources.Actor{Label: adminMail},
		resources.NewToken{Name: "operator", Scopes: []string{resources.PermAIRead}, Days: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.clean(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := w.db.NewRaw("SELECT name FROM api_tokens ORDER BY id").Scan(ctx, &names); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "operator" {
		t.Errorf("tokens after clean = %q, want only the operator's", names)
	}
}

package bunstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"platformapi/bunstore/pgtest"
	"platformapi/resources/testkit"
)

// cacheSummary is what a model's node_caches_json says: hostname/status
// pairs in its order.
func cacheSummary(t *testing.T, db *bun.DB, repo string) []string {
	t.Helper()
	var raw string
	q := db.NewRaw("SELECT node_caches_json::text FROM ai_models WHERE repo = ?", repo)
	if err := q.Scan(context.Background(), &raw); err != nil {
		t.Fatal(err)
	}
	var caches []struct{ Hostname, Status string }
	if err := json.Unmarshal([]byte(raw), &caches); err != nil {
		t.Fatalf("%s: %q: %v", repo, raw, err)
	}
	out := []string{}
	for _, c := range caches {
		out = append(out, c.Hostname+"/"+c.Status)
	}
	return out
}

func mustExec(t *testing.T, db bun.IDB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestModelCachesColumn_FollowsEveryCacheChange: the trigger keeps each
// model's node_caches_json equal to its caches in hostname order through
// inserts, updates (also moving a cache to another model) and deletes.
func TestModelCachesColumn_FollowsEveryCacheChange(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	mustExec(t, db, `INSERT INTO ai_nodes (hostname) VALUES ('gpu-a'), ('gpu-b'), ('gpu-c')`)
	mustExec(t, db, `INSERT INTO ai_models (repo, display_name) VALUES ('org/one', 'one'), ('org/two', 'two')`)
	ins := `INSERT INTO node_caches (hostname, model_id, status) SELECT ?, id, ? FROM ai_models WHERE repo = ?`
	steps := []struct {
		name     string
		apply    func()
		one, two []string
	}{
		{"new models", func() {}, []string{}, []string{}},
		{"insert", func() {
			mustExec(t, db, ins, "gpu-c", "copying", "org/one")
			mustExec(t, db, ins, "gpu-a", "ready", "org/one")
		}, []string{"gpu-a/ready", "gpu-c/copying"}, []string{}},
		{"update", func() {
			mustExec(t, db, `UPDATE node_caches SET status = 'ready' WHERE hostname = 'gpu-c'`)
		}, []string{"gpu-a/ready", "gpu-c/ready"}, []string{}},
		{"move to another model", func() {
			mustExec(t, db, `UPDATE node_caches SET model_id = (SELECT id FROM ai_models WHERE repo = 'org/two')
				WHERE hostname = 'gpu-a'`)
		}, []string{"gpu-c/ready"}, []string{"gpu-a/ready"}},
		{"delete", func() {
			mustExec(t, db, `DELETE FROM node_caches WHERE hostname = 'gpu-c'`)
		}, []string{}, []string{"gpu-a/ready"}},
	}
	for _, st := range steps {
		st.apply()
		got := [2][]string{cacheSummary(t, db, "org/one"), cacheSummary(t, db, "org/two")}
		if d := cmp.Diff([2][]string{st.one, st.two}, got); d != "" {
			t.Fatalf("after %s (-want +got):\n%s", st.name, d)
		}
	}
}

// TestModelCachesColumn_ConcurrentChangesKeepBoth: two transactions add a
// cache to one model at once; the second waits for the first's lock on the
// model and computes after it committed, so the column holds both caches
// (computed in the second's earlier snapshot it would hold only its own).
func TestModelCachesColumn_ConcurrentChangesKeepBoth(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	mustExec(t, db, `INSERT INTO ai_nodes (hostname) VALUES ('gpu-a'), ('gpu-b')`)
	mustExec(t, db, `INSERT INTO ai_models (repo, display_name) VALUES ('org/one', 'one')`)
	ins := `INSERT INTO node_caches (hostname, model_id, status)
		SELECT ?, id, 'ready' FROM ai_models WHERE repo = 'org/one'`
	first, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback()
	mustExec(t, first, ins, "gpu-a")
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, ins, "gpu-b") // its own transaction
		done <- err
	}()
	waitForLockWait(t, db)
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"gpu-a/ready", "gpu-b/ready"}, cacheSummary(t, db, "org/one")); d != "" {
		t.Fatalf("node_caches_json (-want +got):\n%s", d)
	}
}

// waitForLockWait waits until a backend of db's database waits for a lock.
func waitForLockWait(t *testing.T, db *bun.DB) {
	t.Helper()
	testkit.Eventually(t, 0, "a backend waiting for a lock", func() bool {
		var n int
		err := db.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock'`).Scan(context.Background(), &n)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
}

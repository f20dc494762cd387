package api_test

import (
	"context"
	"testing"
	"time"

	"platformapi/api/apitest"
)

// TestReleases_State_OneSnapshot_AFinishingPromotionNeverVanishes: the
// release state holds "per environment and component the last reported
// version … the PROD DATA lock and the open operations" of one moment. A
// promotion that finishes while the state is read shows either open (with
// the version before it) or finished (with its version), never neither.
func TestReleases_State_OneSnapshot_AFinishingPromotionNeverVanishes(t *testing.T) {
	e, tok := projectEnv(t)
	pid, rid := prodAwaitingApproval(t, e, tok)
	ctx := context.Background()
	tx, err := e.Store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The lock holds the read after its deployments, before its open operations.
	lock := "LOCK TABLE release_operations IN ACCESS EXCLUSIVE MODE"
	if _, err := tx.ExecContext(ctx, lock); err != nil {
		t.Fatal(err)
	}
	done := make(chan *apitest.Response, 1)
	go func() { done <- e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil) }()
	waitForLockWait(t, e, "release_operations")
	for _, sql := range []string{
		"UPDATE release_operations SET status = 'succeeded', finished_at = now() WHERE id = ?",
		`INSERT INTO deployments (project_id, env, component, version, reported_at, reported_by)
			SELECT project_id, 'prod', 'app-api', version, now(), 'pipeline:t'
			FROM release_operations WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, sql, rid); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	st := (<-done).JSON(t)
	prod := st["environments"].(map[string]any)["prod"].(map[string]any)["app-api"]
	if open := st["open_operations"].([]any); len(open) == 0 && prod == nil {
		t.Fatalf("the promotion is neither open nor deployed: %v", st)
	}
}

// waitForLockWait waits until a session waits for a lock on table.
func waitForLockWait(t *testing.T, e *apitest.Env, table string) {
	t.Helper()
	for range 200 {
		var n int
		q := e.Store.DB().NewRaw(`SELECT count(*) FROM pg_locks l
			JOIN pg_class c ON c.oid = l.relation WHERE c.relname = ? AND NOT l.granted`, table)
		if err := q.Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nothing waited for a lock on %s", table)
}

package api_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources/testkit"
)

// TestUpgrade_JobsOfANewerRelease_ThisReleaseWorksOn: in a rolling update
// this release's worker may fetch a job a newer release enqueued. A member
// its arguments do not know is ignored (the job runs as before); a kind it
// does not know fails that attempt only (River retries it with backoff,
// so a newer worker takes it later) and the worker goes on with the rest.
func TestUpgrade_JobsOfANewerRelease_ThisReleaseWorksOn(t *testing.T) {
	e, tok := projectEnv(t)
	ctx := context.Background()
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.Worker.StopAndCancel(stopCtx); err != nil {
		t.Fatal(err)
	}
	var unknownID int64
	if err := e.Store.DB().NewRaw("INSERT INTO river_job (args, kind, max_attempts) "+
		`VALUES ('{"node":"gpu-01"}', 'kind_of_a_newer_release', 25) RETURNING id`).
		Scan(ctx, &unknownID); err != nil {
		t.Fatal(err)
	}
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	_, op := createProject(t, e, tok, shop(cid))
	res, err := e.Store.DB().ExecContext(ctx, `UPDATE river_job SET args = args || `+
		`'{"added_later":{"priority":"high"},"dry_run":false}' WHERE kind = 'project_provision'`)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("add a member to the provisioning job's args: %d rows, %v", n, err)
	}
	e.StartWorker()
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	testkit.Eventually(t, 30*time.Second, "the unknown kind failed an attempt, kept", func() bool {
		var state string
		var attempt int
		if err := e.Store.DB().NewRaw("SELECT state, attempt FROM river_job WHERE id = ?", unknownID).
			Scan(ctx, &state, &attempt); err != nil {
			t.Fatal(err)
		}
		if state == "completed" || state == "discarded" || state == "cancelled" {
			t.Fatalf("the job of an unknown kind ended %s after %d attempts", state, attempt)
		}
		return attempt >= 1 && state != "running"
	})
	if r := e.Do("GET", "/api/v1/operations", tok, nil); r.Status != 200 {
		t.Fatalf("list operations: %d %s", r.Status, r.Body)
	}
}

// TestUpgrade_AnswerStoredByANewerRelease_ReplayedAsStored: a keyed request
// retried on this release's replica replays the answer a newer release
// stored (its bytes and headers, members this release does not know
// included); the key's columns are the same in both releases.
func TestUpgrade_AnswerStoredByANewerRelease_ReplayedAsStored(t *testing.T) {
	e, tok := projectEnv(t)
	body := acme("short_name", "SKEW", "long_name", "Skew")
	first := e.Do("POST", "/api/v1/customers", tok, body, "Idempotency-Key", "skew-1")
	if first.Status != 201 {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	newer := `{"id":"` + first.JSON(t)["id"].(string) + `","added_later":{"tier":"gold"}}`
	res, err := e.Store.DB().ExecContext(context.Background(), "UPDATE idempotency_keys SET "+
		"response_body = convert_to(?, 'UTF8'), response_header = response_header || "+
		`'{"X-Added-Later":["1"]}'`+" WHERE key = 'skew-1'", newer)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("store a newer release's answer: %d rows, %v", n, err)
	}
	again := e.Do("POST", "/api/v1/customers", tok, body, "Idempotency-Key", "skew-1")
	got := [4]string{strconv.Itoa(again.Status), string(again.Body), again.Header.Get("Location"),
		again.Header.Get("X-Added-Later")}
	want := [4]string{"201", newer, first.Header.Get("Location"), "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("replay (-want +got):\n%s", diff)
	}
}

package api_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"platformapi/api/apitest"
	"platformapi/resources/testkit"
)

// An archive and a tenant rename of the same customer, made to overlap: the
// test holds a table lock one of them needs after it has locked the
// customer, so the other arrives while the first is mid-way.

// holdTable locks table in mode inside a transaction of the test's own
// until the returned release is called.
func holdTable(t *testing.T, e *apitest.Env, table, mode string) (release func()) {
	t.Helper()
	tx, err := e.Store.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(t.Context(), "LOCK TABLE ? IN "+mode+" MODE", bun.Ident(table)); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback() }
}

// waitingOnLocks waits until n sessions of the test's database wait on a lock.
func waitingOnLocks(t *testing.T, e *apitest.Env, n int) {
	t.Helper()
	testkit.Eventually(t, 0, "requests waiting on a lock", func() bool {
		var waiting int
		err := e.Store.DB().NewRaw(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(context.Background(), &waiting)
		return err == nil && waiting >= n
	})
}

// async sends a request in the background; its answer arrives on the channel.
func async(e *apitest.Env, method, path, tok string, body any) <-chan *apitest.Response {
	out := make(chan *apitest.Response, 1)
	go func() { out <- e.Do(method, path, tok, body) }()
	return out
}

// TestTenants_RenameArrivingDuringAnArchive_WaitsThen409CustomerArchived:
// a rename that arrives while the customer is being archived waits for the
// archive and is then refused: no tenant changes under an archived customer.
func TestTenants_RenameArrivingDuringAnArchive_WaitsThen409CustomerArchived(t *testing.T) {
	e, tok := customerEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	path := "/api/v1/tenants/" + createTenant(t, e, tok, cid, "acme-two")
	release := holdTable(t, e, "projects", "ACCESS EXCLUSIVE") // the archive counts projects
	archive := async(e, "DELETE", "/api/v1/customers/"+cid, tok, nil)
	waitingOnLocks(t, e, 1)
	rename := async(e, "PATCH", path, tok, map[string]any{"name": "Renamed"})
	waitingOnLocks(t, e, 2)
	release()
	if r := <-archive; r.Status != 204 {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	assertProblem(t, <-rename, 409, "customer_archived")
	if name := e.Do("GET", path, tok, nil).JSON(t)["name"]; name == "Renamed" {
		t.Fatal("the tenant was renamed after its customer was archived")
	}
}

// TestCustomers_ArchiveArrivingDuringARename_409ConflictRenameKept: an
// archive that arrives while a tenant of the customer is being renamed is
// refused at once (409 conflict, retry), the rename completes, and the
// archive then succeeds.
func TestCustomers_ArchiveArrivingDuringARename_409ConflictRenameKept(t *testing.T) {
	e, tok := customerEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	path := "/api/v1/tenants/" + createTenant(t, e, tok, cid, "acme-two")
	release := holdTable(t, e, "audit_events", "EXCLUSIVE") // the rename writes its event last
	rename := async(e, "PATCH", path, tok, map[string]any{"name": "Renamed"})
	waitingOnLocks(t, e, 1)
	assertProblem(t, e.Do("DELETE", "/api/v1/customers/"+cid, tok, nil), 409, "conflict")
	release()
	if r := <-rename; r.Status != 200 {
		t.Fatalf("rename: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/api/v1/customers/"+cid, tok, nil); r.Status != 204 {
		t.Fatalf("archive after the rename: %d %s", r.Status, r.Body)
	}
}

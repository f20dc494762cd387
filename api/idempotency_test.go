package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func TestIdempotency_SameKeySameRequest_ReplaysByteForByte(t *testing.T) {
	e, tok := customerEnv(t)
	first := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "k-1")
	// Same members in another order and spacing: the same request.
	again := e.Do("POST", "/api/v1/customers", tok, `{ "vcs_group":"acme","short_name":"ACME","long_name":"Acme Corporation",
		"primary_contact_name":"Jane Doe","primary_contact_email":"Jane.Doe@ACME.Example"}`, "Idempotency-Key", "k-1")
	if first.Status != 201 || again.Status != 201 || string(first.Body) != string(again.Body) {
		t.Fatalf("replay: %d %d\n%s\n%s", first.Status, again.Status, first.Body, again.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("only the replay carries Idempotent-Replayed: true")
	}
	if again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("replayed headers: %v", again.Header)
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 1 {
		t.Fatalf("customers: %d", n)
	}
}

func TestIdempotency_SameKeyOtherRequest_409Reused(t *testing.T) {
	e, tok := customerEnv(t)
	e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "k-2")
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme("long_name", "Acme Ltd"), "Idempotency-Key", "k-2"),
		409, "idempotency_key_reused")
	assertProblem(t, e.Do("POST", "/api/v1/customers?x=1", tok, acme(), "Idempotency-Key", "k-2"), 409, "idempotency_key_reused")
}

func TestIdempotency_InvalidKey_400(t *testing.T) {
	e, tok := customerEnv(t)
	for _, key := range []string{"has space", strings.Repeat("k", 256), "tab\tkey", ""} {
		m := assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", key), 400, "invalid_idempotency_key")
		if m["field"] != "Idempotency-Key" {
			t.Fatalf("field: %v", m["field"])
		}
	}
	if r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", strings.Repeat("~", 255)); r.Status != 201 {
		t.Fatalf("255 printable characters: %d %s", r.Status, r.Body)
	}
}

func TestIdempotency_ProblemIsStoredAndReplayed(t *testing.T) {
	e, tok := customerEnv(t)
	createCustomer(t, e, tok, acme())
	first := e.Do("POST", "/api/v1/customers", tok, acme("vcs_group", "other"), "Idempotency-Key", "k-3")
	assertProblem(t, first, 409, "short_name_taken")
	again := e.Do("POST", "/api/v1/customers", tok, acme("vcs_group", "other"), "Idempotency-Key", "k-3",
		"X-Request-ID", "the-retry")
	if again.Status != 409 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replayed problem: %d %v %s", again.Status, again.Header, again.Body)
	}
	// The stored problem, but its request_id is the replay's X-Request-ID
	// (contract: request_id equals the X-Request-ID response header).
	replayed := assertProblem(t, again, 409, "short_name_taken")
	want := first.JSON(t)
	want["request_id"] = "the-retry"
	if d := cmp.Diff(want, replayed); d != "" {
		t.Fatalf("replayed problem (-want +got):\n%s", d)
	}
}

func TestIdempotency_KeyScopedToAccountNotToken(t *testing.T) {
	e, tok := customerEnv(t)
	sameAccount := e.Token(resources.PermTenancyWrite)
	first := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "shared")
	if r := e.Do("POST", "/api/v1/customers", sameAccount, acme(), "Idempotency-Key", "shared"); r.Header.Get("Idempotent-Replayed") != "true" ||
		string(r.Body) != string(first.Body) {
		t.Fatalf("another token of the same person must replay: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	if _, err := e.Portal.CreateServiceAccount(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewServiceAccount{Name: "bot",
		Permissions: []string{resources.PermTenancyWrite}}); err != nil {
		t.Fatal(err)
	}
	bot := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "b", Scopes: []string{resources.PermTenancyWrite}, ServiceAccount: "bot"})
	r := e.Do("POST", "/api/v1/customers", bot, acme(), "Idempotency-Key", "shared")
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("another account's key must not replay")
	}
	assertProblem(t, r, 409, "short_name_taken")
}

func TestIdempotency_50ConcurrentIdenticalCreates_OneCustomerOneTenantOneEvent(t *testing.T) {
	e, tok := customerEnv(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for range 50 {
		wg.Go(func() {
			r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "race")
			outcome := "other"
			switch {
			case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "true":
				outcome = "replayed"
			case r.Status == 201:
				outcome = "created"
			case r.Status == 429 && r.Header.Get("Retry-After") != "" && strings.Contains(string(r.Body), "idempotency_request_in_progress"):
				outcome = "in progress"
			}
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if outcomes["created"] != 1 || outcomes["other"] != 0 {
		t.Fatalf("outcomes: %v", outcomes)
	}
	for table, want := range map[string]int{"customers": 1, "tenants": 1, "audit_events WHERE entity_type = 'customer'": 1} {
		if n := count(t, e, "SELECT count(*) FROM "+table); n != want {
			t.Fatalf("%s: %d, want %d", table, n, want)
		}
	}
}

func TestCustomers_50ConcurrentCreatesWithoutIndex_DistinctIndexes(t *testing.T) {
	e, tok := customerEnv(t)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			name := "C" + strings.Repeat("X", i%10) + string(rune('A'+i/10)) + string(rune('A'+i%10))
			r := e.Do("POST", "/api/v1/customers", tok, acme("short_name", name, "vcs_group", strings.ToLower(name)))
			if r.Status != 201 {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	if n := count(t, e, "SELECT count(DISTINCT customer_index) FROM customers WHERE customer_index BETWEEN 1 AND 50"); n != 50 {
		t.Fatalf("distinct indexes 1..50: %d", n)
	}
}

// finishFails makes storing the answer fail once: the customer is committed
// but the key keeps no answer, as after a crash at that moment.
type finishFails struct {
	resources.Idempotency
	mu   sync.Mutex
	fail bool
}

func (f *finishFails) Finish(ctx context.Context, l *resources.Lease, res resources.StoredResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		f.fail = false
		return errors.New("injected fault: the answer was not stored")
	}
	return f.Idempotency.Finish(ctx, l, res)
}

func TestIdempotency_FaultBetweenCommitAndStoredAnswer_RetryCreatesNoSecondCustomer(t *testing.T) {
	faulty := &finishFails{fail: true}
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		faulty.Idempotency = st
		return faulty
	}})
	tok := e.Token(resources.PermTenancyWrite)
	first := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "crash")
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "crash"), 429, "idempotency_request_in_progress")
	e.Clock.Advance(resources.IdempotencyLeaseTTL + time.Second) // the crashed attempt's lease runs out
	retry := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "crash")
	if retry.Status != 201 || retry.JSON(t)["id"] != first.JSON(t)["id"] {
		t.Fatalf("retry: %d %s", retry.Status, retry.Body)
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 1 {
		t.Fatalf("customers after the retry: %d", n)
	}
	if r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "crash"); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("the retry's answer must now be stored")
	}
}

func TestIdempotency_KeysExpireAfter24Hours(t *testing.T) {
	e, tok := customerEnv(t)
	e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "old")
	e.Clock.Advance(23 * time.Hour)
	if n, err := e.Store.DeleteExpired(context.Background()); err != nil || n != 0 {
		t.Fatalf("deleted before 24 h: %d %v", n, err)
	}
	e.Clock.Advance(2 * time.Hour)
	if n, err := e.Store.DeleteExpired(context.Background()); err != nil || n != 1 {
		t.Fatalf("deleted after 24 h: %d %v", n, err)
	}
}

// Issue 18, R3: two Idempotency-Key headers were joined into one key "A,B",
// so a retry with A alone created a second customer. Two keys are refused.
func TestIdempotency_KeyHeaderTwice_400NothingCreated(t *testing.T) {
	e, tok := customerEnv(t)
	body, _ := json.Marshal(acme())
	req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/v1/customers", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Idempotency-Key", "A")
	req.Header.Add("Idempotency-Key", "B")
	res, err := e.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := assertProblem(t, &apitest.Response{Status: res.StatusCode, Header: res.Header, Body: raw}, 400,
		"invalid_idempotency_key")
	if m["field"] != "Idempotency-Key" || !strings.Contains(m["detail"].(string), "once") {
		t.Fatalf("problem: %v", m)
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 0 {
		t.Fatalf("customers: %d", n)
	}
}

package api_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func acme(overrides ...any) map[string]any {
	b := map[string]any{"short_name": "ACME", "long_name": "Acme Corporation", "vcs_group": "acme",
		"primary_contact_email": "Jane.Doe@ACME.Example", "primary_contact_name": "Jane Doe"}
	for i := 0; i+1 < len(overrides); i += 2 {
		if overrides[i+1] == nil {
			delete(b, overrides[i].(string))
		} else {
			b[overrides[i].(string)] = overrides[i+1]
		}
	}
	return b
}

func customerEnv(t *testing.T) (*apitest.Env, string) {
	e := apitest.New(t, apitest.Options{})
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "t", AllowDestroy: true,
		Scopes: []string{resources.PermTenancyWrite, resources.PermTenancyRead, resources.PermAuditRead}})
}

func createCustomer(t *testing.T, e *apitest.Env, tok string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/v1/customers", tok, body)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

func count(t *testing.T, e *apitest.Env, sql string) int {
	t.Helper()
	var n int
	if err := e.Store.DB().NewRaw(sql).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCustomers_Create_201DefaultsPrimaryTenantGroupAndOneCustomerEvent(t *testing.T) {
	e, tok := customerEnv(t)
	r := e.Do("POST", "/api/v1/customers", tok, acme(), "X-Request-ID", "create-acme-1")
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	c := r.JSON(t)
	if r.Header.Get("Location") != "/api/v1/customers/"+c["id"].(string) {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	want := map[string]any{"status": "active", "billing_tier": "INTERNAL", "edition": "sp", "default_email_tier": 3.0,
		"customer_index": 1.0, "notes": nil, "primary_contact_email": "Jane.Doe@acme.example"}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
	if _, has := c["warnings"]; has {
		t.Errorf("no warnings expected: %v", c["warnings"])
	}
	if n := count(t, e, "SELECT count(*) FROM tenants WHERE slug = 'acme' AND is_primary"); n != 1 {
		t.Fatalf("primary tenants: %d", n)
	}
	if g := e.VCS.Groups(); len(g) != 1 || g[0].Path != "acme" {
		t.Fatalf("code-host groups: %v", g)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=customer")
	if len(items) != 1 {
		t.Fatalf("customer events: %d", len(items))
	}
	ev := items[0]
	if ev["actor"] != apitest.AdminEmail || ev["auth_kind"] != "pat" || ev["token_id"] == nil ||
		ev["request_id"] != "create-acme-1" || ev["source_ip"] != "127.0.0.1" || ev["action"] != "customer.create" {
		t.Fatalf("event: %v", ev)
	}
}

func TestCustomers_Create_FieldRules_422WithField(t *testing.T) {
	e, tok := customerEnv(t)
	cases := []struct {
		body  map[string]any
		field string
	}{
		{acme("short_name", "acme"), "short_name"}, {acme("short_name", "A"), "short_name"},
		{acme("short_name", "ABCDEFGHIJKLMNOPQ"), "short_name"}, {acme("long_name", "Ac"), "long_name"},
		{acme("long_name", strings.Repeat("x", 81)), "long_name"}, {acme("vcs_group", "Acme"), "vcs_group"},
		{acme("vcs_group", "a"), "vcs_group"}, {acme("vcs_group", "a"+strings.Repeat("b", 30)), "vcs_group"},
		{acme("primary_contact_email", "not-an-address"), "primary_contact_email"},
		{acme("primary_contact_name", "J"), "primary_contact_name"}, {acme("billing_tier", "FREE"), "billing_tier"},
		{acme("customer_index", 0), "customer_index"}, {acme("customer_index", 1000), "customer_index"},
		{acme("default_email_tier", 4), "default_email_tier"}, {acme("edition", "cloud"), "edition"},
		{acme("notes", strings.Repeat("n", 2001)), "notes"}, {acme("status", "archived"), "status"},
		{acme("short_name", nil), "short_name"}, {acme("surprise", 1), "surprise"},
	}
	for _, c := range cases {
		m := assertProblem(t, e.Do("POST", "/api/v1/customers", tok, c.body), 422, "validation_failed")
		if m["field"] != c.field {
			t.Errorf("%v: field %v, want %s", c.body, m["field"], c.field)
		}
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 0 {
		t.Fatalf("customers written: %d", n)
	}
	createCustomer(t, e, tok, acme("notes", strings.Repeat("n", 2000), "customer_index", 999, "short_name",
		"ABCDEFGHIJKLMNOP", "long_name", strings.Repeat("x", 80), "vcs_group", "a"+strings.Repeat("b", 29)))
}

func TestCustomers_Create_IndexNextFreeAndTaken_409(t *testing.T) {
	e, tok := customerEnv(t)
	createCustomer(t, e, tok, acme("customer_index", 2))
	c := createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))
	if c["customer_index"] != 1.0 {
		t.Fatalf("next free index: %v", c["customer_index"])
	}
	c = createCustomer(t, e, tok, acme("short_name", "GAMMA", "vcs_group", "gamma", "customer_index", nil))
	if c["customer_index"] != 3.0 {
		t.Fatalf("next free index after 1, 2: %v", c["customer_index"])
	}
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme("short_name", "DELTA", "vcs_group", "delta", "customer_index", 2)),
		409, "customer_index_taken")
}

func TestCustomers_Create_IndexExhausted_409(t *testing.T) {
	e, tok := customerEnv(t)
	if _, err := e.Store.DB().ExecContext(context.Background(), `INSERT INTO customers (short_name, long_name, vcs_group,
		primary_contact_email, primary_contact_name, billing_tier, customer_index, default_email_tier, edition, status)
		SELECT 'C' || g, 'Customer ' || g, 'c' || g, 'a@b.example', 'Someone', 'INTERNAL', g, 3, 'sp', 'archived'
		FROM generate_series(1, 999) g`); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme()), 409, "customer_index_exhausted")
}

func TestCustomers_Create_ShortNameAndVCSGroupTakenForever_409(t *testing.T) {
	e, tok := customerEnv(t)
	c := createCustomer(t, e, tok, acme())
	if r := e.Do("DELETE", "/api/v1/customers/"+c["id"].(string), tok, nil); r.Status != 204 {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme("vcs_group", "other")), 409, "short_name_taken")
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme("short_name", "OTHER")), 409, "vcs_group_taken")
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme("short_name", "OTHER", "vcs_group", "other",
		"customer_index", c["customer_index"])), 409, "customer_index_taken")
}

func TestCustomers_Create_VCSGroupCollision_409NothingWritten(t *testing.T) {
	e, tok := customerEnv(t)
	e.VCS.HoldCollidingGroup("acme")
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, acme()), 409, "vcs_group_collision")
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 0 {
		t.Fatalf("customers: %d", n)
	}
	e.VCS.AddEmptyGroup("beta")
	c := createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))
	if _, has := c["warnings"]; has {
		t.Fatalf("an empty group is adopted: %v", c["warnings"])
	}
}

func TestCustomers_Create_CodeHostDown_201WithWarning(t *testing.T) {
	e, tok := customerEnv(t)
	e.VCS.SetUnreachable(true)
	c := createCustomer(t, e, tok, acme())
	w := c["warnings"].([]any)
	if len(w) != 1 || w[0].(map[string]any)["code"] != "vcs_group_failed" {
		t.Fatalf("warnings: %v", w)
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 1 {
		t.Fatalf("customers: %d", n)
	}
}

func TestCustomers_ReadWithVCSStatus_LiveOnlyWhenAsked(t *testing.T) {
	e, tok := customerEnv(t)
	id := createCustomer(t, e, tok, acme())["id"].(string)
	calls := e.VCS.Calls()
	plain := e.Do("GET", "/api/v1/customers/"+id, tok, nil).JSON(t)
	e.Do("GET", "/api/v1/customers", tok, nil)
	if _, has := plain["vcs_status"]; has || e.VCS.Calls() != calls {
		t.Fatalf("plain read or list contacted the code host: %v (%d calls)", plain, e.VCS.Calls()-calls)
	}
	st := e.Do("GET", "/api/v1/customers/"+id+"?include=vcs_status", tok, nil).JSON(t)["vcs_status"].(map[string]any)
	if st["state"] != "present" || !strings.Contains(st["web_url"].(string), "acme") {
		t.Fatalf("vcs_status: %v", st)
	}
	e.VCS.SetUnreachable(true)
	m := e.Do("GET", "/api/v1/customers/"+id+"?include=vcs_status", tok, nil).JSON(t)
	if v, has := m["vcs_status"]; !has || v != nil || m["warnings"].([]any)[0].(map[string]any)["code"] != "vcs_status_unavailable" {
		t.Fatalf("unreachable: %v", m)
	}
	assertProblem(t, e.Do("GET", "/api/v1/customers/"+id+"?include=everything", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("GET", "/api/v1/customers/999", tok, nil), 404, "customer_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/customers/0123", tok, nil), 400, "invalid_parameter")
}

func TestCustomers_List_ExactFiltersCombineArchivedIncluded(t *testing.T) {
	e, tok := customerEnv(t)
	for i, s := range []string{"alpha", "beta", "gamma"} {
		body := acme("short_name", strings.ToUpper(s), "vcs_group", s)
		if i == 1 {
			body["status"] = "suspended"
		}
		createCustomer(t, e, tok, body)
	}
	e.Do("DELETE", "/api/v1/customers/3", tok, nil)
	for q, want := range map[string]string{"": "ALPHA,BETA,GAMMA", "?status=archived": "GAMMA", "?status=suspended": "BETA",
		"?short_name=ALPHA": "ALPHA", "?short_name=ALPHA&vcs_group=beta": "", "?vcs_group=gamma&status=archived": "GAMMA",
		"?short_name=ALP": ""} {
		var got []string
		for _, it := range e.Do("GET", "/api/v1/customers"+q, tok, nil).JSON(t)["items"].([]any) {
			got = append(got, it.(map[string]any)["short_name"].(string))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
}

func TestCustomers_List_CursorRoundTripsWhileRowsAreInserted(t *testing.T) {
	e, tok := customerEnv(t)
	for i := range 5 {
		createCustomer(t, e, tok, acme("short_name", fmt.Sprintf("C%d", i), "vcs_group", fmt.Sprintf("c%d", i)))
	}
	var ids []string
	query := "limit=2"
	for page := 0; ; page++ {
		m := e.Do("GET", "/api/v1/customers?"+query, tok, nil).JSON(t)
		for _, it := range m["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		createCustomer(t, e, tok, acme("short_name", fmt.Sprintf("N%d", page), "vcs_group", fmt.Sprintf("n%d", page)))
		if m["next_cursor"] == nil {
			break
		}
		query = "limit=2&cursor=" + m["next_cursor"].(string)
	}
	if strings.Join(ids[:5], ",") != "1,2,3,4,5" {
		t.Fatalf("ids: %v", ids)
	}
	for i := 1; i < len(ids); i++ {
		if parseInt(t, ids[i]) <= parseInt(t, ids[i-1]) {
			t.Fatalf("not ascending without repeats: %v", ids)
		}
	}
}

func TestCustomers_Create_NullIndexAllocates(t *testing.T) {
	e, tok := customerEnv(t)
	r := e.Do("POST", "/api/v1/customers", tok, `{"short_name":"ACME","long_name":"Acme Corporation","vcs_group":"acme",
		"primary_contact_email":"a@acme.example","primary_contact_name":"Jane Doe","customer_index":null,"notes":null}`)
	if r.Status != 201 || r.JSON(t)["customer_index"] != 1.0 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func TestCustomers_Create_PrimaryTenantHasItsOwnTenantCreateEvent(t *testing.T) {
	e, tok := customerEnv(t)
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	tn := e.Do("GET", "/api/v1/tenants/"+primaryTenant(t, e, tok, cid), tok, nil).JSON(t)
	customer, _ := auditItems(t, e, tok, "?entity_type=customer&entity_id="+cid)
	got, _ := auditItems(t, e, tok, "?entity_type=tenant&entity_id="+tn["id"].(string))
	if len(customer) != 1 || len(got) != 1 {
		t.Fatalf("events: customer %v, tenant %v", customer, got)
	}
	// The customer's event with the tenant's action, entity and state: the
	// same actor, token, request and address, the form a POST /tenants writes.
	want := maps.Clone(customer[0])
	want["id"], want["occurred_at"] = got[0]["id"], got[0]["occurred_at"]
	want["action"], want["entity_type"], want["entity_id"] = "tenant.create", "tenant", tn["id"]
	want["after_state"] = map[string]any{"id": float64(parseInt(t, tn["id"].(string))),
		"customer_id": float64(parseInt(t, cid)), "slug": "acme", "name": "Acme Corporation",
		"primary": true, "created_at": tn["created_at"], "updated_at": tn["updated_at"]}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Fatalf("tenant.create event (-want +got):\n%s", diff)
	}
}

func TestCustomers_Create_KeyedRetry_OneTenantCreateEvent(t *testing.T) {
	e, tok := customerEnv(t)
	first := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "primary-1")
	again := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "primary-1")
	if first.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %d %s", first.Status, again.Status, again.Body)
	}
	tid := primaryTenant(t, e, tok, first.JSON(t)["id"].(string))
	items, _ := auditItems(t, e, tok, "?action=tenant.create")
	if len(items) != 1 || items[0]["entity_id"] != tid {
		t.Fatalf("tenant.create events after a keyed retry: %v", items)
	}
}

// TestCustomers_Create_OmittedIndexWhileAnotherWriterTakesIt_201NextFree:
// "customer_index … when omitted the server allocates the next free index".
// A writer that takes an index without the allocation lock (an explicit
// index, the portal) and commits while the allocation waits on it must not
// turn a request that named no index into 409 customer_index_taken.
func TestCustomers_Create_OmittedIndexWhileAnotherWriterTakesIt_201NextFree(t *testing.T) {
	e, tok := customerEnv(t)
	ctx := context.Background()
	tx, err := e.Store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO customers (short_name, long_name, vcs_group,
		primary_contact_email, primary_contact_name, billing_tier, customer_index, default_email_tier,
		edition, status) VALUES ('OTHER', 'Other writer', 'other', 'a@b.example', 'Someone',
		'INTERNAL', 1, 3, 'sp', 'active')`); err != nil {
		t.Fatal(err)
	}
	done := make(chan *apitest.Response, 1)
	go func() { done <- e.Do("POST", "/api/v1/customers", tok, acme()) }()
	time.Sleep(300 * time.Millisecond) // the allocation picks 1 and waits on the row above
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.Status != 201 {
		t.Fatalf("create without an index: %d %s", r.Status, r.Body)
	}
	if idx := r.JSON(t)["customer_index"]; idx != 2.0 {
		t.Fatalf("customer_index %v, want 2 (the next free one)", idx)
	}
}

// TestCustomers_Create_VCSGroupOfACustomer_409TakenNotCollision: a
// vcs_group another customer holds is 409 vcs_group_taken, also when that
// customer's group (adopted while empty, so without the platform's marker)
// has since filled with projects; vcs_group_collision is for a foreign group.
func TestCustomers_Create_VCSGroupOfACustomer_409TakenNotCollision(t *testing.T) {
	e, tok := customerEnv(t)
	e.VCS.AddEmptyGroup("acme")
	createCustomer(t, e, tok, acme())
	e.VCS.HoldCollidingGroup("acme") // the adopted group now holds projects
	other := acme("short_name", "OTHER")
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, other), 409, "vcs_group_taken")
	tenant := e.Do("POST", "/api/v1/tenants", tok,
		map[string]any{"customer_id": "1", "slug": "acme-eu", "name": "EU"})
	if tenant.Status != 201 {
		t.Fatalf("tenant: %d %s", tenant.Status, tenant.Body)
	}
	e.VCS.HoldCollidingGroup("acme-eu")
	eu := acme("short_name", "EU", "vcs_group", "acme-eu")
	assertProblem(t, e.Do("POST", "/api/v1/customers", tok, eu), 409, "vcs_group_taken")
}

package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func auditItems(t *testing.T, e *apitest.Env, tok, query string) ([]map[string]any, any) {
	t.Helper()
	r := e.Do("GET", "/api/v1/audit-events"+query, tok, nil)
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", query, r.Status, r.Body)
	}
	m := r.JSON(t)
	var out []map[string]any
	for _, it := range m["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out, m["next_cursor"]
}

func TestAudit_TokenCreateAndAPIEnable_SessionWithSecretsNulled(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAuditRead)
	items, _ := auditItems(t, e, tok, "?entity_type=api_token&action=api_token.create")
	if len(items) != 1 {
		t.Fatalf("token create events: %d", len(items))
	}
	ev := items[0]
	after := ev["after_state"].(map[string]any)
	if ev["actor"] != apitest.AdminEmail || ev["auth_kind"] != "session" || ev["before_state"] != nil {
		t.Fatalf("event: %v", ev)
	}
	if v, ok := after["token_hash"]; !ok || v != nil {
		t.Fatalf("token_hash must be present and null: %v", after)
	}
	if after["name"] != "test" || after["kind"] != "pat" {
		t.Fatalf("after_state: %v", after)
	}
	items, _ = auditItems(t, e, tok, "?action=settings.api_enable")
	if len(items) != 1 || items[0]["auth_kind"] != "session" || items[0]["entity_type"] != "platform_settings" {
		t.Fatalf("api enable events: %v", items)
	}
	if items[0]["before_state"].(map[string]any)["api_enabled"] != false || items[0]["after_state"].(map[string]any)["api_enabled"] != true {
		t.Fatalf("api enable states: %v", items[0])
	}
	one := e.Do("GET", "/api/v1/audit-events/"+items[0]["id"].(string), tok, nil).JSON(t)
	if one["action"] != "settings.api_enable" {
		t.Fatalf("read one: %v", one)
	}
}

func TestAudit_UnknownEvent_404(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	assertProblem(t, e.Do("GET", "/api/v1/audit-events/999999", e.Token(resources.PermAuditRead), nil), 404, "audit_event_not_found")
}

func TestAudit_PagesNewestFirstWhileRowsAreInserted(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	for i := range 7 {
		if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: fmt.Sprintf("role-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	tok := e.Token(resources.PermAuditRead)
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		q := "?action=role.create&limit=3"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		items, next := auditItems(t, e, tok, q)
		for _, it := range items {
			seen = append(seen, it["entity_id"].(string))
		}
		if page == 0 { // a newer row must not shift later pages
			if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: "late-role"}); err != nil {
				t.Fatal(err)
			}
		}
		if next == nil {
			break
		}
		cursor = next.(string)
	}
	want := []string{"role-6", "role-5", "role-4", "role-3", "role-2", "role-1", "role-0"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("pages: %v, want %v", seen, want)
	}
}

func TestAudit_CursorBoundToListAndFilters_400InvalidCursor(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	for i := range 3 {
		if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: fmt.Sprintf("r-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	tok := e.Token(resources.PermAuditRead, resources.PermAPITokensRead)
	_, next := auditItems(t, e, tok, "?action=role.create&limit=1")
	c := url.QueryEscape(next.(string))
	assertProblem(t, e.Do("GET", "/api/v1/audit-events?action=user.create&limit=1&cursor="+c, tok, nil), 400, "invalid_cursor")
	assertProblem(t, e.Do("GET", "/api/v1/api-tokens?cursor="+c, tok, nil), 400, "invalid_cursor")
	assertProblem(t, e.Do("GET", "/api/v1/audit-events?cursor=bm90LWEtY3Vyc29y", tok, nil), 400, "invalid_cursor")
	tampered := []byte(next.(string))
	tampered[3] ^= 1
	assertProblem(t, e.Do("GET", "/api/v1/audit-events?action=role.create&cursor="+url.QueryEscape(string(tampered)), tok, nil), 400, "invalid_cursor")
	if r := e.Do("GET", "/api/v1/audit-events?action=role.create&limit=2&cursor="+c, tok, nil); r.Status != 200 {
		t.Fatalf("same filters, other limit: %d %s", r.Status, r.Body)
	}
}

func TestAudit_FiltersByEntityAndTimeWindow(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAuditRead)
	all, _ := auditItems(t, e, tok, "")
	if len(all) < 3 {
		t.Fatalf("events: %d", len(all))
	}
	newest := all[0]
	items, _ := auditItems(t, e, tok, "?entity_type="+url.QueryEscape(newest["entity_type"].(string))+"&entity_id="+url.QueryEscape(newest["entity_id"].(string)))
	if len(items) != 1 || items[0]["id"] != newest["id"] {
		t.Fatalf("entity filter: %v", items)
	}
	at := newest["occurred_at"].(string)
	if since, _ := auditItems(t, e, tok, "?since="+url.QueryEscape(at)); len(since) != 1 {
		t.Fatalf("since the newest: %d events", len(since))
	}
	if until, _ := auditItems(t, e, tok, "?until="+url.QueryEscape(at)); len(until) != len(all)-1 {
		t.Fatalf("until the newest: %d events, want %d", len(until), len(all)-1)
	}
	if none, _ := auditItems(t, e, tok, "?actor=nobody@example.test"); len(none) != 0 {
		t.Fatalf("unknown actor: %v", none)
	}
}

// TestAudit_RowsOfOtherWriters_SecretLookingMembersAlwaysNull: the contract
// says secret-looking members of before_state and after_state are always
// null, at any depth; rows the portal, pipelines or ops scripts wrote
// straight into the table (not through the API's redaction) are no
// exception, in the list and when read one by one.
func TestAudit_RowsOfOtherWriters_SecretLookingMembersAlwaysNull(t *testing.T) {
	item, bodies := otherWritersRow(t, "ops:legacy", `'user.update', 'users', '7',
		'{"password": "hunter2", "nested": {"api_key": "k1"}, "name": "Ada"}',
		'{"list": [{"client_secret": "s1"}], "Token": "t1", "name": "Ada"}'`)
	for _, body := range bodies {
		for _, secret := range []string{"hunter2", "k1", "s1", "t1"} {
			if strings.Contains(body, secret) {
				t.Errorf("secret %q shown: %s", secret, body)
			}
		}
		if !strings.Contains(body, "Ada") {
			t.Errorf("other members lost: %s", body)
		}
	}
	before := item["before_state"].(map[string]any)
	if v, ok := before["password"]; !ok || v != nil {
		t.Fatalf("password must be present and null: %v", before)
	}
}

// TestAudit_SecretLookingNamesSpelledWithHyphensOrSpaces_AlwaysNull: a
// secret-looking member is null however its words are joined (`api-key`,
// `Private-Key`, `session key`, as HTTP headers and YAML write them), and an
// `Authorization` or `passphrase` member is one (contract, Audit event: "and
// the like"). Members that only look alike stay.
func TestAudit_SecretLookingNamesSpelledWithHyphensOrSpaces_AlwaysNull(t *testing.T) {
	_, bodies := otherWritersRow(t, "pipeline:42", `'deploy.call', 'deploy', '1',
		'{"headers": {"X-Api-Key": "k1", "Authorization": "Bearer b1"}, "Idempotency-Key": "i1"}',
		'{"Private-Key": "p1", "session key": "s1", "ssh.passphrase": "f1", "sha256": "d1"}'`)
	for _, body := range bodies {
		for _, secret := range []string{"k1", "b1", "p1", "s1", "f1"} {
			if strings.Contains(body, secret) {
				t.Errorf("secret %q shown: %s", secret, body)
			}
		}
		for _, kept := range []string{"i1", "d1"} {
			if !strings.Contains(body, kept) {
				t.Errorf("member with %q lost: %s", kept, body)
			}
		}
	}
}

// otherWritersRow writes one audit row of actor straight into the table,
// as the portal, a pipeline or an ops script does (values: action,
// entity_type, entity_id, before_state, after_state as SQL literals), and
// reads it back through the API: the listed item, and both its readings
// (listed, and read by id) as text.
func otherWritersRow(t *testing.T, actor, values string) (map[string]any, []string) {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	if _, err := e.Store.DB().NewRaw(`INSERT INTO audit_events
		(actor, action, entity_type, entity_id, before_state, after_state) VALUES (?, `+values+`)`, actor).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	tok := e.Token(resources.PermAuditRead)
	items, _ := auditItems(t, e, tok, "?actor="+actor)
	if len(items) != 1 {
		t.Fatalf("events: %v", items)
	}
	one := e.Do("GET", "/api/v1/audit-events/"+items[0]["id"].(string), tok, nil)
	return items[0], []string{fmt.Sprint(items[0]), string(one.Body)}
}

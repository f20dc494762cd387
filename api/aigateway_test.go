package api_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

var keyValue = regexp.MustCompile(`^sk-gw-[0-9A-Za-z]{40}$`)

func createKey(t *testing.T, e *apitest.Env, tok string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/v1/ai/gateway/keys", tok, body)
	if r.Status != 201 {
		t.Fatalf("create key %v: %d %s", body, r.Status, r.Body)
	}
	return r.JSON(t)
}

// verifyKey asks /ai-gateway/verify whether value opens the gateway, and
// for which key id.
func verifyKey(t *testing.T, e *apitest.Env, value string) (int64, bool) {
	t.Helper()
	r := e.Do("GET", resources.GatewayVerifyPath, value, nil)
	if r.Status != 200 {
		assertProblem(t, r, 401, resources.CodeGatewayKeyInvalid)
		return 0, false
	}
	id, err := strconv.ParseInt(r.Header.Get(resources.GatewayKeyIDHeader), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id, true
}

// assertNowhere fails when a key value shows up in the audit log, the
// server log, the idempotency store or any key listing or read.
func assertNowhere(t *testing.T, e *apitest.Env, tok string, values ...string) {
	t.Helper()
	var stored string
	if err := e.Store.DB().NewRaw(`SELECT coalesce(string_agg(coalesce(before_state::text, '') || coalesce(after_state::text, ''), ' '), '')
		FROM audit_events`).Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	var replies string
	if err := e.Store.DB().NewRaw(`SELECT coalesce(string_agg(encode(response_body, 'escape'), ' '), '') FROM idempotency_keys`).
		Scan(context.Background(), &replies); err != nil {
		t.Fatal(err)
	}
	reads := string(e.Do("GET", "/api/v1/ai/gateway/keys", tok, nil).Body) + string(e.Do("GET", "/api/v1/audit-events?limit=500", tok, nil).Body)
	for _, v := range values {
		for where, text := range map[string]string{"audit rows": stored, "server log": e.LogText(), "idempotency store": replies, "reads": reads} {
			if strings.Contains(text, v) {
				t.Errorf("a key value is in the %s", where)
			}
		}
	}
}

// The tiers are the catalogue's tier names, sorted and distinct; a model
// recorded with an empty gateway_tier names no tier (no key can carry "").
func TestAIGateway_Read_BaseURLAndSortedDistinctTiers(t *testing.T) {
	e, tok := aiEnv(t)
	if m := e.Do("GET", "/api/v1/ai/gateway", tok, nil).JSON(t); m["base_url"] != "http://127.0.0.1:4000/v1" || fmt.Sprint(m["tiers"]) != "[]" {
		t.Fatalf("empty catalogue: %v", m)
	}
	for i, tier := range []any{"pro", "basic", nil, "basic", "Edge", "pro", ""} {
		createModel(t, e, tok, map[string]any{"repo": fmt.Sprintf("t/m%d", i), "gateway_tier": tier})
	}
	m := e.Do("GET", "/api/v1/ai/gateway", e.Token(resources.PermAIRead), nil).JSON(t)
	if fmt.Sprint(m["tiers"]) != "[Edge basic pro]" || !strings.HasSuffix(m["base_url"].(string), "/v1") {
		t.Fatalf("gateway: %v", m)
	}
	var got []string
	for cursor := ""; ; {
		page := e.Do("GET", "/api/v1/ai/gateway/tiers?limit=2"+apitest.CursorParam(cursor), e.Token(resources.PermAIGatewayKeys), nil).JSON(t)
		for _, it := range page["items"].([]any) {
			got = append(got, fmt.Sprintf("%s:%v", it.(map[string]any)["name"], it.(map[string]any)["models"]))
		}
		if page["next_cursor"] == nil {
			break
		}
		cursor = page["next_cursor"].(string)
	}
	if !slices.Equal(got, []string{"Edge:1", "basic:2", "pro:2"}) {
		t.Fatalf("tiers: %v", got)
	}
}

func TestAIGatewayKeys_Create_ValueExactlyOnceOnlyWhenAsked(t *testing.T) {
	e, tok := aiEnv(t)
	k := createKey(t, e, tok, map[string]any{"name": "ci-runner", "tier": "pro", "return_value": true})
	value, _ := k["value"].(string)
	if !keyValue.MatchString(value) || k["status"] != "active" || k["tier"] != "pro" || k["created_by"] != apitest.AdminEmail ||
		k["rotated_at"] != nil || k["revoked_at"] != nil {
		t.Fatalf("key: %v", k)
	}
	if id, ok := verifyKey(t, e, value); !ok || formatInt(id) != k["id"] {
		t.Fatalf("the value does not verify: %d %v", id, ok)
	}
	quiet := createKey(t, e, tok, map[string]any{"name": "no-value"})
	if _, has := quiet["value"]; has {
		t.Fatalf("value without return_value: %v", quiet)
	}
	read := e.Do("GET", "/api/v1/ai/gateway/keys/"+k["id"].(string), tok, nil).JSON(t)
	if _, has := read["value"]; has || read["name"] != "ci-runner" {
		t.Fatalf("read: %v", read)
	}
	for _, it := range e.Do("GET", "/api/v1/ai/gateway/keys", tok, nil).JSON(t)["items"].([]any) {
		if _, has := it.(map[string]any)["value"]; has {
			t.Fatalf("listed with a value: %v", it)
		}
	}
	assertNowhere(t, e, tok, value)
	items, _ := auditItems(t, e, tok, "?entity_type=ai_gateway_key")
	if len(items) != 2 {
		t.Fatalf("events: %v", items)
	}
	if after := items[1]["after_state"].(map[string]any); after["name"] != "ci-runner" || after["key_hash"] != nil {
		t.Fatalf("create event: %v", after)
	} else if _, has := after["key_hash"]; !has {
		t.Fatalf("the hash member is recorded, nulled: %v", after)
	}
}

func TestAIGatewayKeys_Create_NameTierLimitsAndNoValueMember_422(t *testing.T) {
	e, tok := aiEnv(t)
	for body, field := range map[string]string{`{"name":""}`: "name", `{"name":"x","tier":""}`: "tier",
		`{"name":"` + strings.Repeat("n", 81) + `"}`: "name", `{"name":"x","tier":"` + strings.Repeat("t", 41) + `"}`: "tier",
		`{"name":"x","value":"sk-gw-mine"}`: "value", `{"tier":"pro"}`: "name"} {
		if m := assertProblem(t, e.Do("POST", "/api/v1/ai/gateway/keys", tok, body), 422, "validation_failed"); m["field"] != field {
			t.Errorf("%s: field %v", body, m["field"])
		}
	}
	createKey(t, e, tok, map[string]any{"name": strings.Repeat("n", 80), "tier": strings.Repeat("t", 40)})
}

func TestAIGatewayKeys_Rotate_InvalidatesOldValueNewOneOnlyWhenAsked(t *testing.T) {
	e, tok := aiEnv(t)
	k := createKey(t, e, tok, map[string]any{"name": "svc", "return_value": true})
	path := "/api/v1/ai/gateway/keys/" + k["id"].(string) + "/rotate"
	old := k["value"].(string)
	r := e.Do("POST", path, tok, map[string]any{"return_value": true})
	rotated := r.JSON(t)
	fresh, _ := rotated["value"].(string)
	if r.Status != 200 || !keyValue.MatchString(fresh) || fresh == old || rotated["rotated_at"] == nil || rotated["id"] != k["id"] {
		t.Fatalf("rotate: %d %v", r.Status, rotated)
	}
	if _, ok := verifyKey(t, e, old); ok {
		t.Fatal("the old value still verifies")
	}
	if _, ok := verifyKey(t, e, fresh); !ok {
		t.Fatal("the new value does not verify")
	}
	quiet := e.Do("POST", path, tok, nil)
	if m := quiet.JSON(t); quiet.Status != 200 || m["value"] != nil {
		t.Fatalf("rotate without return_value: %d %v", quiet.Status, m)
	}
	if _, ok := verifyKey(t, e, fresh); ok {
		t.Fatal("a second rotation left the previous value working")
	}
	assertProblem(t, e.Do("POST", "/api/v1/ai/gateway/keys/999/rotate", tok, nil), 404, "gateway_key_not_found")
	assertNowhere(t, e, tok, old, fresh)
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'ai_gateway_key.rotate'"); n != 2 {
		t.Fatalf("rotate events: %d", n)
	}
}

func TestAIGatewayKeys_Revoke_204TwiceRevokedCannotRotate_409NamingTheWayOut(t *testing.T) {
	e, tok := aiEnv(t)
	k := createKey(t, e, tok, map[string]any{"name": "old", "return_value": true})
	live := createKey(t, e, tok, map[string]any{"name": "live"})
	path := "/api/v1/ai/gateway/keys/" + k["id"].(string)
	assertProblem(t, e.Do("DELETE", path, e.Token(resources.PermAIGatewayKeys), nil), 403, "destroy_not_allowed")
	for range 2 {
		if r := e.Do("DELETE", path, tok, nil); r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
	}
	if _, ok := verifyKey(t, e, k["value"].(string)); ok {
		t.Fatal("a revoked key verifies")
	}
	p := assertProblem(t, e.Do("POST", path+"/rotate", tok, map[string]any{"return_value": true}), 409,
		"gateway_key_revoked")
	want := "gateway key " + k["id"].(string) + " is revoked and stays so; " +
		"create a new key with POST /api/v1/ai/gateway/keys"
	if p["detail"] != want { // the way out, not only the refusal
		t.Fatalf("detail %q, want %q", p["detail"], want)
	}
	if m := e.Do("GET", path, tok, nil).JSON(t); m["status"] != "revoked" || m["revoked_at"] == nil {
		t.Fatalf("revoked key: %v", m)
	}
	for query, want := range map[string]string{"": k["id"].(string) + "," + live["id"].(string), "?status=revoked": k["id"].(string),
		"?status=active": live["id"].(string)} {
		var ids []string
		for _, it := range e.Do("GET", "/api/v1/ai/gateway/keys"+query, tok, nil).JSON(t)["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if strings.Join(ids, ",") != want {
			t.Errorf("%s: %v, want %s", query, ids, want)
		}
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'ai_gateway_key.revoke'"); n != 1 {
		t.Fatalf("revoke events: %d", n)
	}
	assertProblem(t, e.Do("DELETE", "/api/v1/ai/gateway/keys/999", tok, nil), 404, "gateway_key_not_found")
}

// shownOnce is a keyed answer's replay: the record without its value and
// with the warning value_shown_once.
func shownOnce(t *testing.T, first map[string]any) map[string]any {
	t.Helper()
	want := map[string]any{}
	for k, v := range first {
		if k != "value" {
			want[k] = v
		}
	}
	want["warnings"] = []any{map[string]any{"code": "value_shown_once",
		"message": "The key value is shown only once, in the first answer to this request; a replay never repeats it. " +
			"Rotate the key to get a new value."}}
	return want
}

func TestAIGatewayKeys_KeyedCreateWithReturnValue_ValueOnceReplayWarnsStoredAnswerHasNoValue(t *testing.T) {
	e, tok := aiEnv(t)
	body := map[string]any{"name": "k", "return_value": true}
	first := e.Do("POST", "/api/v1/ai/gateway/keys", tok, body, "Idempotency-Key", "key-1")
	again := e.Do("POST", "/api/v1/ai/gateway/keys", tok, body, "Idempotency-Key", "key-1")
	if first.Status != 201 || again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" ||
		again.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("keyed create: %d %v / %d %v", first.Status, first.Header, again.Status, again.Header)
	}
	m := first.JSON(t)
	value, _ := m["value"].(string)
	if id, ok := verifyKey(t, e, value); !keyValue.MatchString(value) || !ok || fmt.Sprint(id) != m["id"] {
		t.Fatalf("first answer's value does not work: %v", m)
	}
	if diff := cmp.Diff(shownOnce(t, m), again.JSON(t)); diff != "" {
		t.Fatalf("replay (-want +got):\n%s", diff)
	}
	if n := count(t, e, "SELECT count(*) FROM ai_gateway_keys"); n != 1 {
		t.Fatalf("%d keys after a replayed create", n)
	}
	var stored []string
	if err := e.Store.DB().NewRaw("SELECT encode(response_body, 'escape') FROM idempotency_keys").
		Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 || strings.Contains(stored[0], value) || !strings.Contains(stored[0], "value_shown_once") {
		t.Fatalf("stored answers: %q", stored)
	}
	assertNowhere(t, e, tok, value)
}

func TestAIGatewayKeys_KeyedRotateWithReturnValue_RotatesOnceReplayWithoutValue(t *testing.T) {
	e, tok := aiEnv(t)
	rot := "/api/v1/ai/gateway/keys/" + createKey(t, e, tok, map[string]any{"name": "k"})["id"].(string) + "/rotate"
	first := e.Do("POST", rot, tok, map[string]any{"return_value": true}, "Idempotency-Key", "rot-1")
	again := e.Do("POST", rot, tok, map[string]any{"return_value": true}, "Idempotency-Key", "rot-1")
	if first.Status != 200 || again.Status != 200 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("keyed rotate: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	m := first.JSON(t)
	value, _ := m["value"].(string)
	if _, ok := verifyKey(t, e, value); !ok {
		t.Fatalf("the first rotation's value does not work (rotated twice?): %v", m)
	}
	if diff := cmp.Diff(shownOnce(t, m), again.JSON(t)); diff != "" {
		t.Fatalf("replay (-want +got):\n%s", diff)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'ai_gateway_key.rotate'"); n != 1 {
		t.Fatalf("%d rotations", n)
	}
	assertNowhere(t, e, tok, value)
	// Without return_value the stored answer is the answer itself.
	plain := e.Do("POST", "/api/v1/ai/gateway/keys", tok, map[string]any{"name": "p"}, "Idempotency-Key", "key-2")
	replay := e.Do("POST", "/api/v1/ai/gateway/keys", tok, map[string]any{"name": "p"}, "Idempotency-Key", "key-2")
	if plain.Status != 201 || string(plain.Body) != string(replay.Body) || strings.Contains(string(plain.Body), "warnings") {
		t.Fatalf("keyed create without value: %s / %s", plain.Body, replay.Body)
	}
}

func TestAIGateway_Permissions_KeysNeedTheKeysPermission(t *testing.T) {
	e, tok := aiEnv(t)
	id := createKey(t, e, tok, map[string]any{"name": "k"})["id"].(string)
	for _, perm := range []string{resources.PermAIRead, resources.PermAIWrite, resources.PermAIGatewayKeys} {
		if r := e.Do("GET", "/api/v1/ai/gateway", e.Token(perm), nil); r.Status != 200 {
			t.Fatalf("%s reads the gateway: %d", perm, r.Status)
		}
	}
	reader := e.Token(resources.PermAIRead, resources.PermAIWrite)
	for _, req := range [][2]string{{"GET", "/api/v1/ai/gateway/keys"}, {"GET", "/api/v1/ai/gateway/keys/" + id},
		{"POST", "/api/v1/ai/gateway/keys"}, {"POST", "/api/v1/ai/gateway/keys/" + id + "/rotate"}} {
		m := assertProblem(t, e.Do(req[0], req[1], reader, map[string]any{"name": "x"}), 403, "forbidden")
		if fmt.Sprint(m["required"]) != "[ai-gateway-keys-global]" {
			t.Errorf("%v: required %v", req, m["required"])
		}
	}
	assertProblem(t, e.Do("GET", "/api/v1/ai/gateway", e.Token(resources.PermAuditRead), nil), 403, "forbidden")
}

// A keyed create whose answer was lost after the commit is resumed by its
// retry: the key exists once, and the value, which exists nowhere any more,
// is replaced by the warning.
func TestAIGatewayKeys_KeyedCreateResumedAfterLostAnswer_NoSecondKeyWarnsInsteadOfValue(t *testing.T) {
	faulty := &finishFails{fail: true}
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		faulty.Idempotency = st
		return faulty
	}})
	tok := e.Token(resources.PermAIGatewayKeys)
	body := map[string]any{"name": "k", "return_value": true}
	first := e.Do("POST", "/api/v1/ai/gateway/keys", tok, body, "Idempotency-Key", "lost")
	e.Clock.Advance(resources.IdempotencyLeaseTTL + time.Second)
	retry := e.Do("POST", "/api/v1/ai/gateway/keys", tok, body, "Idempotency-Key", "lost")
	if first.Status != 201 || retry.Status != 201 {
		t.Fatalf("first %d, retry %d %s", first.Status, retry.Status, retry.Body)
	}
	if diff := cmp.Diff(shownOnce(t, first.JSON(t)), retry.JSON(t)); diff != "" {
		t.Fatalf("resumed answer (-want +got):\n%s", diff)
	}
	if n := count(t, e, "SELECT count(*) FROM ai_gateway_keys"); n != 1 {
		t.Fatalf("%d keys", n)
	}
}

// A rotation keeps the expiry unless the body sets a new one (a future
// instant, or null: never); an expired key rotated without one would get a
// value that opens nothing, so that is 422 naming expires_at and changes
// nothing.
func TestAIGatewayKeys_RotateExpired_NeedsANewExpiry_422(t *testing.T) {
	e, tok := aiEnv(t)
	at := func(d time.Duration) string {
		return e.Clock.Now().Add(d).UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	first := at(time.Hour)
	k := createKey(t, e, tok, map[string]any{"name": "lapsing", "expires_at": first})
	path := "/api/v1/ai/gateway/keys/" + k["id"].(string) + "/rotate"
	if r := e.Do("POST", path, tok, nil).JSON(t); r["expires_at"] != first || r["status"] != "active" {
		t.Fatalf("a live key's rotation changed its expiry: %v", r)
	}
	e.Clock.Advance(time.Hour)
	before := e.Do("GET", "/api/v1/ai/gateway/keys/"+k["id"].(string), tok, nil).JSON(t)
	events := count(t, e, "SELECT count(*) FROM audit_events")
	for _, body := range []any{nil, map[string]any{"return_value": true},
		map[string]any{"expires_at": at(-time.Second)}} {
		m := assertProblem(t, e.Do("POST", path, tok, body), 422, resources.CodeValidationFailed)
		if m["field"] != "expires_at" || !strings.Contains(m["detail"].(string), "expires_at") {
			t.Fatalf("%v: %v", body, m)
		}
	}
	after := e.Do("GET", "/api/v1/ai/gateway/keys/"+k["id"].(string), tok, nil).JSON(t)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Fatalf("a refused rotation changed the key (-before +after):\n%s", diff)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events"); n != events {
		t.Fatalf("a refused rotation wrote %d audit events", n-events)
	}
	later := at(time.Hour)
	r := e.Do("POST", path, tok, map[string]any{"expires_at": later, "return_value": true}).JSON(t)
	if r["expires_at"] != later || r["status"] != "active" {
		t.Fatalf("rotation with a new expiry: %v", r)
	}
	if _, ok := verifyKey(t, e, r["value"].(string)); !ok {
		t.Fatal("the renewed key's value does not verify")
	}
	never := e.Do("POST", path, tok, map[string]any{"expires_at": nil}).JSON(t)
	if never["expires_at"] != nil {
		t.Fatalf("rotation with expires_at null keeps an expiry: %v", r)
	}
}

// The answers that can carry a key's value (create, rotate) say no-store,
// so no cache keeps the one copy of the value there is; a read does not.
func TestAIGatewayKeys_AnswersCarryingTheValue_NoStore(t *testing.T) {
	e, tok := aiEnv(t)
	created := e.Do("POST", "/api/v1/ai/gateway/keys", tok, map[string]any{"name": "ci", "return_value": true})
	id := created.JSON(t)["id"].(string)
	rotated := e.Do("POST", "/api/v1/ai/gateway/keys/"+id+"/rotate", tok, map[string]any{"return_value": true})
	for name, r := range map[string]*apitest.Response{"create": created, "rotate": rotated} {
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", name, got)
		}
	}
	if got := e.Do("GET", "/api/v1/ai/gateway/keys/"+id, tok, nil).Header.Get("Cache-Control"); got != "" {
		t.Errorf("read: Cache-Control %q", got)
	}
}

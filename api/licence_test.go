package api_test

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/licencetest"
)

// licenceEnv starts an Env without a licence and an administrator token
// with the tenancy, licence and audit keys.
func licenceEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e := apitest.New(t, apitest.Options{NoLicence: true})
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "licence", AllowDestroy: true, Scopes: []string{
		resources.PermTenancyRead, resources.PermTenancyWrite, resources.PermLicenceAdmin, resources.PermAuditRead,
		resources.PermAIRead, resources.PermAIWrite, resources.PermAIGatewayKeys}})
}

// putLicence installs p, signed with the test vendor key, over the API.
func putLicence(e *apitest.Env, tok string, p resources.LicencePayload) *apitest.Response {
	e.T.Helper()
	return e.Do("PUT", "/api/v1/licence", tok, map[string]any{"bundle": licencetest.Bundle(p)})
}

// assertLicenceRefusal checks a 403 licence_* problem: state, a remedy,
// and no Retry-After (retrying never helps).
func assertLicenceRefusal(t *testing.T, r *apitest.Response, code, state string) map[string]any {
	t.Helper()
	m := assertProblem(t, r, 403, code)
	if m["state"] != state || m["remedy"] == nil || m["remedy"] == "" || r.Header.Get("Retry-After") != "" {
		t.Fatalf("licence refusal: %v %v", m, r.Header)
	}
	return m
}

func TestLicence_Missing_InstallationIDShownReadsWorkWritesLicenceRequired(t *testing.T) {
	e, tok := licenceEnv(t)
	l := e.Do("GET", "/api/v1/licence", tok, nil).JSON(t)
	want := map[string]any{"state": "missing", "installation_id": e.InstallationID(), "serial": nil, "edition": nil,
		"features": nil, "limits": nil, "valid_from": nil, "valid_until": nil, "grace_days": nil, "installed_at": nil}
	remedy, _ := l["remedy"].(string)
	delete(l, "remedy")
	if diff := cmp.Diff(want, l); diff != "" || !strings.Contains(remedy, e.InstallationID()) {
		t.Fatalf("missing licence (-want +got):\n%s\nremedy %q", diff, remedy)
	}
	if r := e.Do("GET", "/api/v1/customers", tok, nil); r.Status != 200 {
		t.Fatalf("a read without a licence: %d", r.Status)
	}
	m := assertLicenceRefusal(t, e.Do("POST", "/api/v1/customers", tok, acme()), "licence_required", "missing")
	if !strings.Contains(m["remedy"].(string), "PUT /api/v1/licence") {
		t.Fatalf("remedy: %v", m["remedy"])
	}
	if n := count(t, e, "SELECT count(*) FROM customers"); n != 0 {
		t.Fatalf("%d customers created without a licence", n)
	}
	// The licence endpoint stays reachable; then writes work.
	r := putLicence(e, tok, licencetest.Payload(e.InstallationID(), e.Clock.Now()))
	if r.Status != 200 || r.JSON(t)["state"] != "valid" {
		t.Fatalf("install: %d %s", r.Status, r.Body)
	}
	createCustomer(t, e, tok, acme())
}

func TestLicence_Put_ShowsRecordFullSerialForAdminAuditedOnceWithoutBundle(t *testing.T) {
	e, tok := licenceEnv(t)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	p.Limits = map[string]int{"customers": 5}
	e.Clock.Advance(123456789) // nanoseconds the database does not keep
	got := putLicence(e, tok, p).JSON(t)
	if got["installed_at"] == nil {
		t.Fatalf("installed_at: %v", got)
	}
	// The answer is the record as stored: a GET shows the same installed_at.
	if diff := cmp.Diff(got, e.Do("GET", "/api/v1/licence", tok, nil).JSON(t)); diff != "" {
		t.Fatalf("GET differs from PUT (-put +get):\n%s", diff)
	}
	delete(got, "installed_at")
	want := map[string]any{"state": "valid", "installation_id": e.InstallationID(), "serial": licencetest.Serial,
		"edition": "test", "features": []any{"ai", "brand"}, "limits": map[string]any{"customers": 5.0},
		"valid_from": p.ValidFrom.Format(time.RFC3339), "valid_until": p.ValidUntil.Format(time.RFC3339),
		"grace_days": 30.0, "remedy": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("PUT answer (-want +got):\n%s", diff)
	}
	putLicence(e, tok, p) // the same bundle again changes nothing
	var states []string
	if err := e.Store.DB().NewRaw(`SELECT coalesce(before_state::text, '') || after_state::text FROM audit_events
		WHERE action = 'licence.install'`).Scan(context.Background(), &states); err != nil {
		t.Fatal(err)
	}
	bundle := licencetest.Bundle(p)
	if len(states) != 1 || strings.Contains(states[0], bundle[len(bundle)-20:]) ||
		strings.Contains(states[0], licencetest.Serial) || !strings.Contains(states[0], "****-****-****-MNOP") {
		t.Fatalf("audit states: %q", states)
	}
}

func TestLicence_Put_InvalidBundles_422NamingWhatFailedNothingChanges(t *testing.T) {
	e, tok := licenceEnv(t)
	id, now := e.InstallationID(), e.Clock.Now()
	good := licencetest.Payload(id, now)
	with := func(change func(*resources.LicencePayload)) string {
		p := good
		change(&p)
		return licencetest.Bundle(p)
	}
	_, otherKey, _ := ed25519.GenerateKey(nil)
	foreign, _ := resources.SignLicence(otherKey, good)
	parts := strings.Split(licencetest.Bundle(good), ".")
	tampered := with(func(p *resources.LicencePayload) { p.Edition = "enterprise" })
	tampered = strings.Split(tampered, ".")[0] + "." + parts[1]
	for name, tc := range map[string]struct{ bundle, what string }{
		"not two parts":         {"bm90LWEtYnVuZGxl", "form"},
		"not base64url":         {"***." + parts[1], "form"},
		"short signature":       {parts[0] + ".AAAA", "form"},
		"signed by another key": {foreign, "signature"},
		"payload changed":       {tampered, "signature"},
		"payload not an object": {licencetest.Sign([]byte(`["x"]`)), "payload"},
		"serial":                {with(func(p *resources.LicencePayload) { p.Serial = "ABCD-EFGH" }), "serial"},
		"another installation":  {with(func(p *resources.LicencePayload) { p.InstallationID = "other" }), "installation_id"},
		"no edition":            {with(func(p *resources.LicencePayload) { p.Edition = "" }), "edition"},
		"ends before it starts": {with(func(p *resources.LicencePayload) { p.ValidUntil = p.ValidFrom }), "valid_until"},
		"negative grace":        {with(func(p *resources.LicencePayload) { p.GraceDays = -1 }), "grace_days"},
		"bad feature":           {with(func(p *resources.LicencePayload) { p.Features = []string{"AI!"} }), "features"},
		"negative limit":        {with(func(p *resources.LicencePayload) { p.Limits = map[string]int{"customers": -1} }), "limits"},
		"starts in the future":  {with(func(p *resources.LicencePayload) { p.ValidFrom = now.Add(time.Hour) }), "valid_from"},
		"grace ended": {with(func(p *resources.LicencePayload) {
			p.ValidFrom, p.ValidUntil = now.AddDate(-1, 0, 0), now.AddDate(0, -2, 0)
		}), "valid_until"},
	} {
		t.Run(name, func(t *testing.T) {
			m := assertProblem(t, e.Do("PUT", "/api/v1/licence", tok, map[string]any{"bundle": tc.bundle}), 422, "licence_bundle_invalid")
			if m["field"] != "bundle" || !strings.HasPrefix(m["detail"].(string), tc.what+":") {
				t.Fatalf("want field bundle, detail about %s: %v", tc.what, m)
			}
		})
	}
	if l := e.Do("GET", "/api/v1/licence", tok, nil).JSON(t); l["state"] != "missing" {
		t.Fatalf("after refused bundles: %v", l)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE entity_type = 'licence'"); n != 0 {
		t.Fatalf("%d licence events after refusals", n)
	}
	assertProblem(t, e.Do("PUT", "/api/v1/licence", tok, map[string]any{"bundle": ""}), 422, "validation_failed")
	reader := e.Token(resources.PermLicenceRead)
	m := assertProblem(t, e.Do("PUT", "/api/v1/licence", reader, map[string]any{"bundle": licencetest.Bundle(good)}), 403, "forbidden")
	if diff := cmp.Diff([]any{"licence-admin-global"}, m["required"]); diff != "" {
		t.Fatalf("required (-want +got):\n%s", diff)
	}
}

func TestLicence_StatesFromTheClock_GraceStillWritesExpiredLockedRenewUnlocks(t *testing.T) {
	e, tok := licenceEnv(t)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	p.ValidUntil, p.GraceDays = p.ValidFrom.Add(25*time.Hour), 2
	putLicence(e, tok, p)
	steps := []struct {
		advance time.Duration
		state   string
		write   int
	}{
		{0, "valid", 201},
		{25 * time.Hour, "grace", 201},
		{46 * time.Hour, "grace", 201},
		{2 * time.Hour, "expired", 403},
	}
	createCustomer(t, e, tok, acme())
	for i, s := range steps {
		e.Clock.Advance(s.advance)
		l := e.Do("GET", "/api/v1/licence", tok, nil).JSON(t)
		r := e.Do("POST", "/api/v1/tenants", tok, map[string]any{"customer_id": "1", "slug": "t" + string(rune('a'+i)) + "x",
			"name": "Tenant"})
		if l["state"] != s.state || r.Status != s.write {
			t.Fatalf("step %d: state %v, write %d %s; want %s, %d", i, l["state"], r.Status, r.Body, s.state, s.write)
		}
		if s.state == "grace" && !strings.Contains(l["remedy"].(string), "writes stop at") {
			t.Fatalf("grace remedy: %v", l["remedy"])
		}
	}
	assertLicenceRefusal(t, e.Do("PATCH", "/api/v1/customers/1", tok, map[string]any{"notes": "x"}), "licence_locked", "expired")
	if r := e.Do("GET", "/api/v1/customers/1", tok, nil); r.Status != 200 {
		t.Fatalf("a read while expired: %d", r.Status)
	}
	renewed := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	if r := putLicence(e, tok, renewed); r.Status != 200 || r.JSON(t)["state"] != "valid" {
		t.Fatalf("renewal: %d %s", r.Status, r.Body)
	}
	if r := e.Do("PATCH", "/api/v1/customers/1", tok, map[string]any{"notes": "x"}); r.Status != 200 {
		t.Fatalf("write after renewal: %d %s", r.Status, r.Body)
	}
}

func TestLicence_StoredBundleNoLongerVerifies_InvalidAndLocked(t *testing.T) {
	e, tok := licenceEnv(t)
	_, otherKey, _ := ed25519.GenerateKey(nil)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	bundle, _ := resources.SignLicence(otherKey, p) // e.g. installed before the vendor key was changed
	if _, err := e.Store.InstallLicence(context.Background(), resources.Actor{Label: "ops:test"}, bundle, p); err != nil {
		t.Fatal(err)
	}
	l := e.Do("GET", "/api/v1/licence", tok, nil).JSON(t)
	if l["state"] != "invalid" || l["serial"] != nil || l["installed_at"] == nil ||
		!strings.Contains(l["remedy"].(string), "signature") {
		t.Fatalf("invalid licence: %v", l)
	}
	assertLicenceRefusal(t, e.Do("POST", "/api/v1/customers", tok, acme()), "licence_locked", "invalid")
	if r := putLicence(e, tok, p); r.Status != 200 || r.JSON(t)["state"] != "valid" {
		t.Fatalf("installing a good bundle over an invalid one: %d %s", r.Status, r.Body)
	}
}

// TestLicence_StartsInTheFuture_InvalidWithPayloadMembersNull: a stored
// licence whose valid_from lies ahead of the clock (another replica's
// clock, or a clock set back) reads invalid, and while invalid serial,
// edition, features, limits and the dates are null (decisions, Licence).
func TestLicence_StartsInTheFuture_InvalidWithPayloadMembersNull(t *testing.T) {
	e, tok := licenceEnv(t)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now().Add(48*time.Hour))
	ctx := context.Background()
	if _, err := e.Store.InstallLicence(ctx, resources.Actor{Label: "ops:test"}, licencetest.Bundle(p), p); err != nil {
		t.Fatal(err)
	}
	l := e.Do("GET", "/api/v1/licence", tok, nil).JSON(t)
	if l["state"] != "invalid" || l["installed_at"] == nil || l["remedy"] == nil {
		t.Fatalf("a licence starting in the future: %v", l)
	}
	// It verifies; it is not usable yet: the remedy says why, not "does not verify".
	if r := l["remedy"].(string); !strings.Contains(r, "valid_from") || strings.Contains(r, "does not verify") {
		t.Errorf("remedy %q", r)
	}
	for _, m := range []string{"serial", "edition", "features", "limits", "valid_from", "valid_until", "grace_days"} {
		if l[m] != nil {
			t.Errorf("%s is %v while invalid, want null", m, l[m])
		}
	}
	assertLicenceRefusal(t, e.Do("POST", "/api/v1/customers", tok, acme()), "licence_locked", "invalid")
}

// The licence is checked inside the idempotency keeping: a keyed request
// always gets its first answer, a success replayed after the licence
// expired and a refusal replayed after a licence was installed.
func TestLicence_KeyedRequests_ReplayTheFirstAnswerWhateverTheLicenceNow(t *testing.T) {
	e, tok := licenceEnv(t)
	refused := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "before")
	assertLicenceRefusal(t, refused, "licence_required", "missing")
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	p.ValidUntil, p.GraceDays = p.ValidFrom.Add(3*time.Hour), 0
	putLicence(e, tok, p)
	again := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "before")
	if again.Status != 403 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a refused keyed create retried after the install: %d %s", again.Status, again.Body)
	}
	created := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "after")
	e.Clock.Advance(p.ValidUntil.Sub(e.Clock.Now()) + time.Minute) // expired
	replay := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "after")
	if created.Status != 201 || replay.Status != 201 || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a keyed create replayed after expiry: %d, %d %s", created.Status, replay.Status, replay.Body)
	}
	assertLicenceRefusal(t, e.Do("POST", "/api/v1/customers", tok, acme("short_name", "NEW", "vcs_group", "new"),
		"Idempotency-Key", "later"), "licence_locked", "expired")
}

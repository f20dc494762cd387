package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/licencetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// cli runs platformapi commands in-process against one test database.
type cli struct {
	t   *testing.T
	dsn string
}

// newCLI migrates a fresh database, creates the administrator
// root@example.test and installs a valid test licence (the test vendor key
// is configured through PLATFORMAPI_LICENCE_PUBLIC_KEY).
func newCLI(t *testing.T) *cli {
	c := newBareCLI(t)
	c.installLicence(licencetest.Payload(c.installationID(), time.Now()))
	return c
}

// newBareCLI is newCLI without a licence.
func newBareCLI(t *testing.T) *cli {
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "cli-test-pepper-0123456789")
	t.Setenv("PLATFORMAPI_LICENCE_PUBLIC_KEY", licencetest.PublicKeyBase64())
	c := &cli{t: t, dsn: pgtest.DSN(t)}
	c.ok("migrate", "up")
	c.ok("portal", "user", "create", "--email", "root@example.test", "--name", "Root", "--role", "admin")
	return c
}

func (c *cli) installationID() string {
	c.t.Helper()
	return c.ok("portal", "licence", "show")["installation_id"].(string)
}

// bundleFile writes p, signed with the test vendor key, to a file.
func (c *cli) bundleFile(p resources.LicencePayload) string {
	c.t.Helper()
	file := filepath.Join(c.t.TempDir(), "licence.bundle")
	if err := os.WriteFile(file, []byte(licencetest.Bundle(p)+"\n"), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return file
}

// installLicence installs p with `portal licence install` as
// root@example.test.
func (c *cli) installLicence(p resources.LicencePayload) map[string]any {
	c.t.Helper()
	return c.ok("portal", "licence", "install", "--as", "root@example.test", "--bundle", c.bundleFile(p))
}

// run executes one command line and returns its JSON output and error.
func (c *cli) run(args ...string) (map[string]any, error) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut)
	root.SetArgs(append([]string{"--database-url", c.dsn, "--log-level", "error"}, args...))
	err := root.ExecuteContext(context.Background())
	var m map[string]any
	if out.Len() > 0 {
		if jerr := json.Unmarshal(out.Bytes(), &m); jerr != nil {
			c.t.Fatalf("%v: output is not JSON: %s", args, out.String())
		}
	}
	return m, err
}

func (c *cli) ok(args ...string) map[string]any {
	c.t.Helper()
	m, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("%v: %v", args, err)
	}
	return m
}

func (c *cli) refused(code string, args ...string) *resources.Error {
	c.t.Helper()
	_, err := c.run(args...)
	e, ok := resources.AsError(err)
	if !ok || e.Code != code {
		c.t.Fatalf("%v: got %v, want code %s", args, err, code)
	}
	return e
}

// count is what a SELECT count(*) of the CLI's database answers.
func (c *cli) count(sql string) int {
	c.t.Helper()
	var n int
	c.query(sql, &n)
	return n
}

func (c *cli) query(sql string, dest any) {
	c.t.Helper()
	db, err := bunstore.Open(context.Background(), c.dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	if err := db.NewRaw(sql).Scan(context.Background(), dest); err != nil {
		c.t.Fatal(err)
	}
}

func TestPortalTokenCreate_PrintsValueOnceStoresOnlyKeyedHash(t *testing.T) {
	c := newCLI(t)
	m := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "ci", "--scopes", "ai-read-global,audit-read-global")
	value, _ := m["token"].(string)
	if !strings.HasPrefix(value, "svc_pat_") || m["id"] != "1" || m["expires_at"] == nil {
		t.Fatalf("create output: %v", m)
	}
	leaks := c.count("SELECT count(*) FROM api_tokens t, audit_events a WHERE t.token_hash::text " +
		"LIKE '%" + value[8:] + "%' OR a.after_state::text LIKE '%" + value[8:] + "%'")
	if leaks != 0 {
		t.Fatal("the token value is stored somewhere")
	}
	revoked := c.ok("portal", "token", "revoke", "1", "--as", "root@example.test")
	if _, has := revoked["token"]; has || revoked["revoked_at"] == nil {
		t.Fatalf("revoke output: %v", revoked)
	}
}

func TestPortalTokenCreate_LifetimeOutside1To365_Refused(t *testing.T) {
	c := newCLI(t)
	for _, days := range []string{"0", "366", "-3"} {
		e := c.refused("validation_failed", "portal", "token", "create", "--as", "root@example.test", "--name", "x", "--scopes", "ai-read-global", "--days", days)
		if e.Field != "days" {
			t.Fatalf("field %q", e.Field)
		}
	}
	m := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "x", "--scopes", "ai-read-global", "--days", "365")
	if m["token"] == nil {
		t.Fatal("365 days refused")
	}
}

func TestPortalTokenCreate_NeverAdminFounderSSHConsole(t *testing.T) {
	c := newCLI(t)
	for _, scope := range []string{"admin", "founder", "ssh-console"} {
		c.refused("scope_not_allowed", "portal", "token", "create", "--as", "root@example.test", "--name", "x", "--scopes", scope)
	}
}

func TestPortalTokenCreate_OnlyKeysTheMinterHolds(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "role", "create", "token-minter", "--permissions", "api-tokens-admin-global,ai-read-global")
	c.ok("portal", "user", "create", "--email", "Mia@Example.TEST", "--name", "Mia", "--role", "token-minter")
	c.refused("scope_not_allowed", "portal", "token", "create", "--as", "mia@example.test", "--name", "x", "--scopes", "audit-read-global")
	c.ok("portal", "token", "create", "--as", "mia@example.test", "--name", "x", "--scopes", "ai-read-global")
	c.ok("portal", "user", "create", "--email", "noone@example.test", "--name", "No One")
	c.refused("forbidden", "portal", "token", "create", "--as", "noone@example.test", "--name", "x", "--scopes", "ai-read-global")
}

func TestPortalServiceAccount_TokenCarriesNoMoreThanTheAccount(t *testing.T) {
	c := newCLI(t)
	sa := c.ok("portal", "service-account", "create", "--as", "root@example.test", "--name", "deployer", "--permissions", "projects-read-global")
	if sa["name"] != "deployer" || sa["id"] != "1" {
		t.Fatalf("account: %v", sa)
	}
	c.refused("scope_not_allowed", "portal", "token", "create", "--as", "root@example.test", "--name", "x",
		"--scopes", "audit-read-global", "--service-account", "deployer")
	m := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "x",
		"--scopes", "projects-read-global", "--service-account", "deployer")
	if !strings.HasPrefix(m["token"].(string), "svc_sat_") {
		t.Fatalf("service-account token: %v", m)
	}
}

// TestPortalTokenCreate_SameNameTwice_AllowedAndNamesTheLiveOthers: names
// are labels (every action takes the id), and one owner may hold two live
// tokens of one name while rotating (mint the new, switch, revoke the
// old). So a second is minted, and its answer lists by id the owner's
// other live tokens of that name (same_name_live), so a script that
// retried, and lost the first value, sees the first and can revoke it.
// Revoked tokens, other names and another owner's tokens are not listed.
func TestPortalTokenCreate_SameNameTwice_AllowedAndNamesTheLiveOthers(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "service-account", "create", "--as", "root@example.test", "--name", "deployer",
		"--permissions", "audit-read-global")
	steps := []struct {
		name  string
		extra []string
		want  map[string]any
	}{
		{"deploy", nil, map[string]any{"id": "1", "same_name_live": []any{}}},
		{"deploy", nil, map[string]any{"id": "2", "same_name_live": []any{"1"}}},
		{"other", nil, map[string]any{"id": "3", "same_name_live": []any{}}},
		{"deploy", []string{"--service-account", "deployer"}, map[string]any{"id": "4", "same_name_live": []any{}}},
		{"revoke 1", nil, nil},
		{"deploy", nil, map[string]any{"id": "5", "same_name_live": []any{"2"}}},
	}
	for _, s := range steps {
		if s.want == nil {
			c.ok("portal", "token", "revoke", "1", "--as", "root@example.test")
			continue
		}
		out := c.ok(append([]string{"portal", "token", "create", "--as", "root@example.test",
			"--name", s.name, "--scopes", "audit-read-global"}, s.extra...)...)
		got := map[string]any{"id": out["id"], "same_name_live": out["same_name_live"]}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("mint %q %v (-want +got):\n%s", s.name, s.extra, diff)
		}
	}
}

// TestPortalCredentials_Refused_NamesTheFieldCreatesNothing: a refused
// service account or token names the field and the value at fault, and
// nothing is created. A service account acts only through its tokens, so
// a key no token can carry (admin) is refused, not stored without effect;
// minting for a service account that does not exist, or is disabled, names
// service_account, as the portal's form calls it.
func TestPortalCredentials_Refused_NamesTheFieldCreatesNothing(t *testing.T) {
	mintFor := func(account string) []string {
		return []string{"token", "create", "--name", "ci", "--scopes", "ai-read-global",
			"--service-account", account}
	}
	for _, tc := range []struct {
		name, code, field, value, table string
		args                            []string
		disabled                        string // a service account created and disabled first
	}{
		{"admin key", "scope_not_allowed", "permissions", `"admin"`, "service_accounts",
			[]string{"service-account", "create", "--name", "deployer",
				"--permissions", "projects-read-global,admin"}, ""},
		{"unknown service account", "service_account_not_found", "service_account", `"nope"`, "api_tokens",
			mintFor("nope"), ""},
		{"disabled service account", "principal_disabled", "service_account", `"ci-bot"`, "api_tokens",
			mintFor("ci-bot"), "ci-bot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			if tc.disabled != "" { // no command disables an account: the table is changed directly
				c.ok("portal", "service-account", "create", "--as", "root@example.test", "--name", tc.disabled,
					"--permissions", "ai-read-global")
				if c.count("WITH d AS (UPDATE service_accounts SET status = 'disabled' RETURNING 1) "+
					"SELECT count(*) FROM d") != 1 {
					t.Fatal("no account disabled")
				}
			}
			args := append([]string{"portal"}, tc.args...)
			e := c.refused(tc.code, append(args, "--as", "root@example.test")...)
			if e.Field != tc.field || !strings.Contains(e.Detail, tc.value) {
				t.Fatalf("refusal: %+v", e)
			}
			if n := c.count("SELECT count(*) FROM " + tc.table); n != 0 {
				t.Fatalf("%d rows in %s after the refusal", n, tc.table)
			}
		})
	}
}

func TestPortalTokenExtend_NewExpiryAndRevokedRefused(t *testing.T) {
	c := newCLI(t)
	first := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "x", "--scopes", "ai-read-global", "--days", "1")
	ext := c.ok("portal", "token", "extend", "1", "--as", "root@example.test", "--days", "30")
	if ext["expires_at"] == first["expires_at"] {
		t.Fatal("expiry unchanged")
	}
	c.refused("validation_failed", "portal", "token", "extend", "1", "--as", "root@example.test", "--days", "400")
	c.ok("portal", "token", "revoke", "1", "--as", "root@example.test")
	c.refused("token_revoked", "portal", "token", "extend", "1", "--as", "root@example.test", "--days", "30")
	events := c.count("SELECT count(*) FROM audit_events WHERE entity_type = 'api_token' " +
		"AND auth_kind = 'session' AND actor = 'root@example.test'")
	if events != 3 { // create, extend, revoke
		t.Fatalf("token events: %d", events)
	}
}

func TestPortalAPI_EnableDisableAuditedAsSession(t *testing.T) {
	c := newCLI(t)
	c.refused("sign_in_required", "portal", "api", "enable", "--as", "")
	if m := c.ok("portal", "api", "enable", "--as", "root@example.test"); m["api_enabled"] != true {
		t.Fatalf("enable: %v", m)
	}
	c.ok("portal", "api", "enable", "--as", "root@example.test") // no change, no event
	if m := c.ok("portal", "api", "disable", "--as", "root@example.test"); m["api_enabled"] != false {
		t.Fatalf("disable: %v", m)
	}
	n := c.count("SELECT count(*) FROM audit_events WHERE entity_type = 'platform_settings' " +
		"AND auth_kind = 'session'")
	if n != 2 {
		t.Fatalf("settings events: %d", n)
	}
	c.ok("portal", "user", "create", "--email", "eve@example.test", "--name", "Eve")
	c.refused("forbidden", "portal", "api", "enable", "--as", "eve@example.test")
}

func TestMigrateStatus_ListsApplied(t *testing.T) {
	c := newCLI(t)
	m := c.ok("migrate", "status")
	list := m["migrations"].([]any)
	if len(list) == 0 || list[0].(map[string]any)["applied"] != true {
		t.Fatalf("status: %v", m)
	}
	if up := c.ok("migrate", "up"); len(up["applied"].([]any)) != 0 {
		t.Fatalf("second up applied: %v", up)
	}
}

// TestPortalAPI_EnableTwice_UpdatedAtAsStored: the first `api enable`
// printed updated_at to the nanosecond, the same command again the stored
// value (microseconds): one instant, two texts. Both print it as stored.
func TestPortalAPI_EnableTwice_UpdatedAtAsStored(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "api", "disable", "--as", "root@example.test")
	first := c.ok("portal", "api", "enable", "--as", "root@example.test")
	again := c.ok("portal", "api", "enable", "--as", "root@example.test")
	if first["updated_at"] != again["updated_at"] {
		t.Fatalf("updated_at %v, then %v for the same change", first["updated_at"], again["updated_at"])
	}
}

// TestPortalTokenCreate_AllowedIPsBareAddress_IsThatOneAddress: an
// administrator restricting a token to one host writes its address; it is
// taken as the network of that one address (/32, /128), not refused.
func TestPortalTokenCreate_AllowedIPsBareAddress_IsThatOneAddress(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "x", "--scopes", "ai-read-global",
		"--allowed-ips", "192.0.2.7,2001:db8::1,10.0.0.0/8")
	var got string
	c.query("SELECT array_to_string(allowed_ips, ' ') FROM api_tokens", &got)
	if want := "192.0.2.7/32 2001:db8::1/128 10.0.0.0/8"; got != want {
		t.Fatalf("allowed_ips %q, want %q", got, want)
	}
	e := c.refused("validation_failed", "portal", "token", "create", "--as", "root@example.test", "--name", "y",
		"--scopes", "ai-read-global", "--allowed-ips", "10.0.0.300/8")
	want := `"10.0.0.300/8" is not an address or a network in CIDR form (e.g. 192.0.2.7 or 203.0.113.0/24)`
	if e.Field != "allowed_ips" || e.Detail != want {
		t.Fatalf("refusal %q (field %q), want %q", e.Detail, e.Field, want)
	}
}

// TestPortalTokenCreate_UnknownScope_SaysUnknownNotNever: a mistyped key is
// not one that "can never be put on a token": the refusal says it is
// unknown, as a service account's does.
func TestPortalTokenCreate_UnknownScope_SaysUnknownNotNever(t *testing.T) {
	c := newCLI(t)
	e := c.refused("validation_failed", "portal", "token", "create", "--as", "root@example.test", "--name", "x",
		"--scopes", "ai-read-global,audit-reed-global")
	if want := `unknown permission key "audit-reed-global"`; e.Field != "scopes" || e.Detail != want {
		t.Fatalf("refusal %q (field %q), want %q", e.Detail, e.Field, want)
	}
}

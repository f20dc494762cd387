package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// inventoryFile writes an inventory file into a temporary directory.
func inventoryFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func hostList(v any) string { return fmt.Sprint(v) }

func TestPortalInventoryImport_ValidYAMLThenJSON_CreatedUpdatedUnchanged(t *testing.T) {
	c := newCLI(t)
	yaml := inventoryFile(t, "roster.yaml", "nodes:\n- {hostname: gpu-01, site: fra1}\n- {hostname: gpu-02, gpu_class: L40S}\n")
	m := c.ok("portal", "inventory", "import", yaml, "--as", "root@example.test")
	if hostList(m["created"]) != "[gpu-01 gpu-02]" || hostList(m["removed"]) != "[]" || hostList(m["kept"]) != "[]" {
		t.Fatalf("first import: %v", m)
	}
	json := inventoryFile(t, "roster.txt", `{"nodes":[{"hostname":"gpu-01","site":"fra1"},{"hostname":"gpu-02","gpu_class":"H100"}]}`)
	m = c.ok("portal", "inventory", "import", json)
	if hostList(m["unchanged"]) != "[gpu-01]" || hostList(m["updated"]) != "[gpu-02]" || hostList(m["created"]) != "[]" {
		t.Fatalf("second import: %v", m)
	}
	var events []struct {
		Actor string `bun:"actor"`
	}
	c.query("SELECT actor FROM audit_events WHERE action = 'ai_node.inventory_import' ORDER BY id", &events)
	if len(events) != 2 || events[0].Actor != "root@example.test" || events[1].Actor != "ops:cli" {
		t.Fatalf("events: %v", events)
	}
	var class string
	c.query("SELECT gpu_class FROM ai_nodes WHERE hostname = 'gpu-02'", &class)
	if class != "H100" {
		t.Fatalf("gpu_class %q", class)
	}
}

func TestPortalInventoryImport_InvalidFile_RefusedNamingTheEntryAndChangingNothing(t *testing.T) {
	c := newCLI(t)
	bad := inventoryFile(t, "roster.yml", "nodes:\n- {hostname: gpu-01}\n- {hostname: gpu-02, vmid: 12}\n- {hostname: gpu-01}\n")
	e := c.refused("inventory_invalid", "portal", "inventory", "import", bad, "--as", "root@example.test")
	if e.Field != "nodes[1].is_virtual" || !strings.Contains(e.Detail, "nodes[1] (gpu-02): parent_host and vmid are only for virtual nodes") ||
		!strings.Contains(e.Detail, "nodes[2] (gpu-01): hostname repeats nodes[0]") {
		t.Fatalf("%+v", e)
	}
	if n := c.count("SELECT count(*) FROM ai_nodes"); n != 0 {
		t.Fatalf("an invalid file imported %d nodes", n)
	}
	// A file that cannot be read is a refusal like any other: JSON naming it.
	e = c.refused(resources.CodeInventoryInvalid, "portal", "inventory", "import",
		filepath.Join(t.TempDir(), "missing.yaml"))
	if e.Field != "file" || !strings.Contains(e.Detail, "missing.yaml") {
		t.Fatalf("a missing file: %+v", e)
	}
}

func TestPortalInventoryImport_MissingNodesRemovedUnlessTheyHoldNodeCaches(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "inventory", "import", inventoryFile(t, "a.yaml", "nodes:\n- {hostname: gpu-01}\n- {hostname: gpu-02}\n- {hostname: gpu-03}\n"))
	var model int64
	c.query("INSERT INTO ai_models (repo, display_name) VALUES ('org/m', 'm') RETURNING id", &model)
	var ignored int
	c.query(fmt.Sprintf("WITH i AS (INSERT INTO node_caches (hostname, model_id, status) VALUES ('gpu-02', %d, 'ready') RETURNING 1) SELECT count(*) FROM i", model), &ignored)
	m := c.ok("portal", "inventory", "import", inventoryFile(t, "b.yaml", "nodes:\n- {hostname: gpu-01}\n"))
	kept := m["kept"].([]any)
	if hostList(m["removed"]) != "[gpu-03]" || len(kept) != 1 || kept[0].(map[string]any)["hostname"] != "gpu-02" ||
		kept[0].(map[string]any)["node_caches"] != 1.0 {
		t.Fatalf("import: %v", m)
	}
	var hosts []string
	c.query("SELECT hostname FROM ai_nodes ORDER BY hostname", &hosts)
	if strings.Join(hosts, ",") != "gpu-01,gpu-02" {
		t.Fatalf("roster: %v", hosts)
	}
}

func TestPortalInventoryImport_ActingPersonNeedsAIWrite(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "user", "create", "--email", "reader@example.test", "--name", "Reader")
	f := inventoryFile(t, "a.yaml", "nodes: []\n")
	c.refused("forbidden", "portal", "inventory", "import", f, "--as", "reader@example.test")
	if m := c.ok("portal", "inventory", "import", f, "--as", "root@example.test"); hostList(m["created"]) != "[]" {
		t.Fatalf("%v", m)
	}
}

func TestPortalInventoryImport_AgentURLKeptAndShownOnTheRoster(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "inventory", "import", inventoryFile(t, "a.yaml",
		"nodes:\n- {hostname: gpu-01, agent_url: 'https://10.0.0.5:9441/'}\n- {hostname: gpu-02}\n"))
	var urls []string
	c.query("SELECT coalesce(agent_url, 'none') FROM ai_nodes ORDER BY hostname", &urls)
	if strings.Join(urls, " ") != "https://10.0.0.5:9441 none" {
		t.Fatalf("agent urls: %v", urls)
	}
	c.refused(resources.CodeInventoryInvalid, "portal", "inventory", "import", inventoryFile(t, "b.yaml",
		"nodes:\n- {hostname: gpu-01, agent_url: 'file:///etc/passwd'}\n"))
}

func TestPortalNodeKey_PrintedOnceRotatedAuditedNeverStored(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "inventory", "import", inventoryFile(t, "a.yaml", "nodes:\n- {hostname: gpu-01}\n"))
	first := c.ok("portal", "node-key", "gpu-01", "--as", "root@example.test")
	key, _ := first["node_key"].(string)
	if !strings.HasPrefix(key, resources.NodeKeyPrefix) || len(key) != len(resources.NodeKeyPrefix)+43 ||
		first["rotated"] != false || first["hostname"] != "gpu-01" {
		t.Fatalf("first key: %v", first)
	}
	second := c.ok("portal", "node-key", "gpu-01", "--as", "root@example.test")
	if second["node_key"] == key || second["rotated"] != true {
		t.Fatalf("rotation: %v", second)
	}
	var nonce []byte
	c.query("SELECT nonce FROM ai_node_keys WHERE hostname = 'gpu-01'", &nonce)
	if got := resources.DeriveNodeKey(resources.Pepper("cli-test-pepper-0123456789"), "gpu-01", nonce); got != second["node_key"] {
		t.Fatal("the printed key is not the one the stored nonce derives")
	}
	var dump string
	c.query("SELECT (SELECT string_agg(k::text, ' ') FROM ai_node_keys k) || "+
		"(SELECT string_agg(a::text, ' ') FROM audit_events a)", &dump)
	if strings.Contains(dump, key) || strings.Contains(dump, second["node_key"].(string)) {
		t.Fatal("a node key is stored in the database")
	}
	var actions []string
	c.query("SELECT action || ' ' || actor || ' ' || auth_kind FROM audit_events WHERE action = 'ai_node.node_key'", &actions)
	if len(actions) != 2 || actions[0] != "ai_node.node_key root@example.test session" {
		t.Fatalf("audit: %v", actions)
	}
}

func TestPortalNodeKey_UnknownNodeAndPersonWithoutAIWriteRefused(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "inventory", "import", inventoryFile(t, "a.yaml", "nodes:\n- {hostname: gpu-01}\n"))
	c.ok("portal", "user", "create", "--email", "reader@example.test", "--name", "Reader")
	c.refused(resources.CodeAINodeNotFound, "portal", "node-key", "gpu-99", "--as", "root@example.test")
	c.refused(resources.CodeForbidden, "portal", "node-key", "gpu-01", "--as", "reader@example.test")
	if _, err := c.run("portal", "node-key", "gpu-01"); err == nil {
		t.Fatal("a node key without --as")
	}
	if n := c.count("SELECT count(*) FROM ai_node_keys"); n != 0 {
		t.Fatalf("%d keys after refusals", n)
	}
}

// TestPortalRoles_WithoutAsTheHostOperatorIsRecordedAsOpsCLI: role create,
// grant and revoke name the acting person with --as, and without it record
// the host operator explicitly as ops:cli (never a person, never "portal").
func TestPortalRoles_WithoutAsTheHostOperatorIsRecordedAsOpsCLI(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "role", "create", "auditor", "--permissions", "audit-read-global")
	c.ok("portal", "user", "create", "--email", "ann@example.test", "--name", "Ann")
	c.ok("portal", "role", "grant", "auditor", "--user", "ann@example.test")
	c.ok("portal", "role", "revoke", "auditor", "--user", "ann@example.test", "--as", "root@example.test")
	var events []struct {
		Action string `bun:"action"`
		Actor  string `bun:"actor"`
	}
	c.query("SELECT action, actor FROM audit_events WHERE action IN ('role.create', 'user.role_grant', "+
		"'user.role_revoke', 'user.create') ORDER BY id", &events)
	got := fmt.Sprint(events) // newCLI made root first, as the host operator
	want := "[{user.create ops:cli} {role.create ops:cli} {user.create ops:cli} {user.role_grant ops:cli} " +
		"{user.role_revoke root@example.test}]"
	if got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
}

// TestPortalRoles_GrantOrRevokeTwice_SecondIsANoOpThatSaysSo: a second
// `role revoke` was refused (422) while a second `role grant` succeeded, so
// a script could not run either twice alike. Each is idempotent now, as
// PATCH /users with the same role set is: the second exits 0, prints the
// person with "changed": false and writes no audit row; the first prints
// "changed": true. A role that does not exist is still refused, so a typo
// is no silent no-op.
func TestPortalRoles_GrantOrRevokeTwice_SecondIsANoOpThatSaysSo(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "role", "create", "auditor", "--permissions", "audit-read-global")
	c.ok("portal", "user", "create", "--email", "ann@example.test", "--name", "Ann")
	events := func() int {
		return c.count("SELECT count(*) FROM audit_events WHERE action LIKE 'user.role_%'")
	}
	steps := []struct {
		verb    string
		roles   []any
		changed bool
		events  int
	}{
		{"grant", []any{"auditor"}, true, 1},
		{"grant", []any{"auditor"}, false, 1},
		{"revoke", []any{}, true, 2},
		{"revoke", []any{}, false, 2},
	}
	for i, s := range steps {
		out := c.ok("portal", "role", s.verb, "auditor", "--user", "ann@example.test",
			"--as", "root@example.test")
		got := map[string]any{"email": out["email"], "roles": out["roles"], "changed": out["changed"]}
		want := map[string]any{"email": "ann@example.test", "roles": s.roles, "changed": s.changed}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("step %d, %s (-want +got):\n%s", i+1, s.verb, diff)
		}
		if n := events(); n != s.events {
			t.Errorf("step %d, %s: %d role events, want %d", i+1, s.verb, n, s.events)
		}
	}
	for _, verb := range []string{"grant", "revoke"} {
		e := c.refused(resources.CodeRoleNotFound, "portal", "role", verb, "audtor",
			"--user", "ann@example.test")
		if !strings.Contains(e.Detail, `"audtor"`) {
			t.Errorf("%s of an unknown role: %q does not name it", verb, e.Detail)
		}
	}
}

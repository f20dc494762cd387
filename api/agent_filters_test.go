package api_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// agentWorld holds customers ACME (active, two projects), SUSP (suspended,
// one project) and IDLE (suspended, none).
func agentWorld(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e, tok := projectEnv(t)
	ctx, actor := context.Background(), resources.Actor{Label: "test"}
	for i, c := range []struct{ short, status string }{{"ACME", "active"}, {"SUSP", "suspended"}, {"IDLE", "suspended"}} {
		cu, err := e.Store.CreateCustomer(ctx, actor, resources.CustomerCreate{Customer: resources.Customer{
			ShortName: c.short, LongName: c.short + " Corp", VCSGroup: strings.ToLower(c.short),
			PrimaryContactEmail: "a@" + strings.ToLower(c.short) + ".example", PrimaryContactName: "Jane",
			BillingTier: "INTERNAL", DefaultEmailTier: 3, Edition: "sp", Status: c.status}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range []int{2, 1, 0}[i] {
			if _, err := e.Store.CreateProject(ctx, actor, resources.Project{CustomerID: cu.ID,
				ShortName: c.short + string(rune('A'+j)), Name: "Project " + c.short, Kind: "cluster",
				Components: []string{"www"}}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e, tok
}

func itemsOf(t *testing.T, r *apitest.Response) []map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var out []map[string]any
	for _, it := range r.JSON(t)["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func TestProjects_CustomerStatusFilter(t *testing.T) {
	t.Parallel()
	e, tok := agentWorld(t)
	var got []string
	for _, p := range itemsOf(t, e.Do("GET", "/api/v1/projects?customer_status=suspended", tok, nil)) {
		got = append(got, p["short_name"].(string))
	}
	if diff := cmp.Diff([]string{"SUSPA"}, got); diff != "" {
		t.Fatalf("projects of suspended customers (-want +got):\n%s", diff)
	}
	r := e.Do("GET", "/api/v1/projects?customer_status=gone", tok, nil)
	if p := r.JSON(t); r.Status != 400 || p["code"] != "invalid_parameter" || p["field"] != "customer_status" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func TestCustomers_IncludeProjectCount(t *testing.T) {
	t.Parallel()
	e, tok := agentWorld(t)
	counts := map[string]any{}
	for _, c := range itemsOf(t, e.Do("GET", "/api/v1/customers?include=project_count", tok, nil)) {
		counts[c["short_name"].(string)] = c["project_count"]
	}
	if diff := cmp.Diff(map[string]any{"ACME": 2.0, "SUSP": 1.0, "IDLE": 0.0}, counts); diff != "" {
		t.Fatalf("project counts (-want +got):\n%s", diff)
	}
	for _, c := range itemsOf(t, e.Do("GET", "/api/v1/customers", tok, nil)) {
		if _, ok := c["project_count"]; ok {
			t.Fatalf("project_count without include: %v", c)
		}
	}
}

func TestLists_Fields_KeepsSelectedMembersAndTheKey(t *testing.T) {
	t.Parallel()
	e, tok := agentWorld(t)
	items := itemsOf(t, e.Do("GET", "/api/v1/customers?status=suspended&fields=short_name,%20status&limit=1", tok, nil))
	want := []map[string]any{{"id": items[0]["id"], "short_name": "SUSP", "status": "suspended"}}
	if diff := cmp.Diff(want, items); diff != "" {
		t.Fatalf("fields (-want +got):\n%s", diff)
	}
	for _, path := range []string{"/api/v1/audit-events?fields=action", "/api/v1/permissions?fields=token_allowed"} {
		for _, it := range itemsOf(t, e.Do("GET", path, tok, nil)) {
			if len(it) != 2 || (it["id"] == nil && it["key"] == nil) {
				t.Fatalf("%s: %v", path, it)
			}
		}
	}
}

// A selection naming no member (only commas and spaces) is no selection: every
// member is answered, as the declared schema requires (found by the fuzz test).
// TestLists_FieldsNamingNoMember_400: a selection that names no member is
// refused like an empty filter (it was read as "every member", so a client
// that lost its list of names got everything without a word).
func TestLists_FieldsNamingNoMember_400(t *testing.T) {
	t.Parallel()
	e, tok := agentWorld(t)
	for _, sel := range []string{",", "%20,%0A,", ",,,", ""} {
		r := e.Do("GET", "/api/v1/customers?limit=2&fields="+sel, tok, nil)
		if p := assertProblem(t, r, 400, "invalid_parameter"); p["field"] != "fields" {
			t.Fatalf("fields=%s: %s", sel, r.Body)
		}
	}
}

func TestLists_FieldsUnknownMember_400NamesFieldsAndValidMembers(t *testing.T) {
	t.Parallel()
	e, tok := projectEnv(t)
	r := e.Do("GET", "/api/v1/projects?fields=name,colour", tok, nil)
	p := r.JSON(t)
	if r.Status != 400 || p["code"] != "invalid_parameter" || p["field"] != "fields" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := p["detail"].(string)
	for _, want := range []string{"colour", "customer_id", "short_name", "components", "updated_at"} {
		if !strings.Contains(d, want) {
			t.Fatalf("detail %q does not name %s", d, want)
		}
	}
}

// TestLists_FieldsNamingAMemberOnlyASingleReadHas_400: vcs_status and
// warnings belong to a customer's own read and create, never to a list
// item; selecting them was taken and answered items of only their id.
func TestLists_FieldsNamingAMemberOnlyASingleReadHas_400(t *testing.T) {
	t.Parallel()
	e, tok := agentWorld(t)
	for _, sel := range []string{"vcs_status", "short_name,warnings"} {
		r := e.Do("GET", "/api/v1/customers?limit=2&fields="+sel, tok, nil)
		p := assertProblem(t, r, 400, "invalid_parameter")
		_, valid, _ := strings.Cut(p["detail"].(string), "valid members: ")
		if p["field"] != "fields" || !strings.Contains(valid, "project_count") ||
			strings.Contains(valid, "vcs_status") || strings.Contains(valid, "warnings") {
			t.Fatalf("fields=%s: %s", sel, r.Body)
		}
	}
	if r := e.Do("GET", "/api/v1/customers?limit=2&fields=project_count&include=project_count", tok,
		nil); r.Status != 200 {
		t.Fatalf("project_count, a list member: %d %s", r.Status, r.Body)
	}
}

func TestAINodes_ModelFilter_ServedLiveOrCached(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAIRead)
	execSQL(t, e, `INSERT INTO ai_nodes (hostname) VALUES ('n1'), ('n2'), ('n3'), ('n4')`)
	execSQL(t, e, `INSERT INTO ai_models (repo, display_name, status) VALUES ('org/a', 'a', 'owned'), ('org/b', 'b', 'owned')`)
	execSQL(t, e, `INSERT INTO node_caches (hostname, model_id, status) VALUES ('n2', 1, 'ready'), ('n3', 2, 'ready')`)
	serving, a, b := "serving", "org/a", "org/b"
	e.Monitor.Set("n1", resources.NodeLive{Status: &serving, Models: []resources.NodeModel{{Model: "a", Repo: &a}}})
	e.Monitor.Set("n4", resources.NodeLive{Status: &serving, Models: []resources.NodeModel{{Model: "b", Repo: &b}}})
	hosts := func(query string) []string {
		var out []string
		for _, n := range itemsOf(t, e.Do("GET", "/api/v1/ai/nodes?"+query, tok, nil)) {
			out = append(out, n["hostname"].(string))
		}
		slices.Sort(out)
		return out
	}
	for query, want := range map[string][]string{
		"model=1": {"n1", "n2"}, "model=org/a": {"n1", "n2"}, "model=org/b": {"n3", "n4"},
		"model=org/b&status=serving": {"n4"}, "model=org/unknown": nil,
	} {
		if diff := cmp.Diff(want, hosts(query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", query, diff)
		}
	}
	r := e.Do("GET", "/api/v1/ai/nodes?model=99", tok, nil)
	if p := r.JSON(t); r.Status != 404 || p["code"] != resources.CodeAIModelNotFound {
		t.Fatalf("unknown id: %d %s", r.Status, r.Body)
	}
}

// A node list shows what a node serves by its served name (models[].model);
// model= that name finds the nodes serving it live and those holding a
// node cache of the repo it is served from, instead of silently nothing.
func TestAINodes_ModelFilter_ServedNameFindsServingNodesAndCachesOfItsRepo(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAIRead)
	execSQL(t, e, `INSERT INTO ai_nodes (hostname) VALUES ('n1'), ('n2'), ('n3'), ('n4')`)
	execSQL(t, e, `INSERT INTO ai_models (repo, display_name, status) VALUES ('org/a', 'a', 'owned')`)
	execSQL(t, e, `INSERT INTO node_caches (hostname, model_id, status) VALUES ('n2', 1, 'ready')`)
	serving, a := "serving", "org/a"
	e.Monitor.Set("n1", resources.NodeLive{Status: &serving, Models: []resources.NodeModel{{Model: "a-chat", Repo: &a}}})
	e.Monitor.Set("n3", resources.NodeLive{Status: &serving, Models: []resources.NodeModel{{Model: "a-chat"}}})
	e.Monitor.Set("n4", resources.NodeLive{Status: &serving, Models: []resources.NodeModel{{Model: "other"}}})
	for query, want := range map[string][]string{
		"model=a-chat": {"n1", "n2", "n3"}, "model=a-chat&status=serving": {"n1", "n3"},
		"model=other": {"n4"}, "model=nobody": nil,
	} {
		var got []string
		for _, n := range itemsOf(t, e.Do("GET", "/api/v1/ai/nodes?"+query, tok, nil)) {
			got = append(got, n["hostname"].(string))
		}
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", query, diff)
		}
	}
}

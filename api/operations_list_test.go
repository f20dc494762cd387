package api_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// opsWorld holds an operation of every kind, each started on its real
// road: a project's provisioning, a succeeded and a failed promotion, a
// data copy booked in the portal, a node cache copied onto gpu-01 and
// removed again. It returns a token holding every key that reads them.
func opsWorld(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e, _, _ := agentEnv(t, apitest.Options{}, nodeagent.Config{})
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "ops", AllowDestroy: true,
		Scopes: []string{resources.PermTenancyWrite, resources.PermProjectsWrite, resources.PermReleasesWrite,
			resources.PermAIWrite}})
	pid, _ := activeProject(t, e, tok, "", nil)
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")
	e.Pipeline.FailNext(1)
	apitest.PollOperation(t, e, tok, acceptedPromotion(t, postPromotion(e, tok, pid,
		promotion("www", "dev", "0.9.0")))["id"].(string), "failed")
	bookDataCopy(t, e, pid)
	model := cacheModel(t, e, "org/model", true)
	apitest.PollOperation(t, e, tok, copyToNode(t, e, tok, "gpu-01", model)["id"].(string), "succeeded")
	rm := e.Do("DELETE", "/api/v1/node-caches/gpu-01/"+model, tok, nil)
	if rm.Status != 202 {
		t.Fatalf("remove: %d %s", rm.Status, rm.Body)
	}
	apitest.PollOperation(t, e, tok, rm.JSON(t)["id"].(string), "succeeded")
	return e, tok
}

// opsNewestFirst orders operations as GET /operations promises: created_at
// descending, then release operations before the others, then id
// descending.
func opsNewestFirst(t *testing.T) func(a, b map[string]any) int {
	return func(a, b map[string]any) int {
		if c := createdAt(t, b).Compare(createdAt(t, a)); c != 0 {
			return c
		}
		ra, aRelease := resources.ReleaseOperationID(a["id"].(string))
		rb, bRelease := resources.ReleaseOperationID(b["id"].(string))
		switch {
		case aRelease != bRelease && aRelease:
			return -1
		case aRelease != bRelease:
			return 1
		case aRelease:
			return int(rb - ra)
		}
		return int(parseInt(t, b["id"].(string)) - parseInt(t, a["id"].(string)))
	}
}

func kindsOf(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		if k := it["kind"].(string); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestOperations_List_EveryKindNewestFirst_EachItemAsGetOperationAnswersIt(t *testing.T) {
	t.Parallel()
	e, tok := opsWorld(t)
	all := walkPages(t, e, tok, "/api/v1/operations", url.Values{"limit": {"200"}})
	if diff := cmp.Diff(sortedKinds(), kindsOf(all)); diff != "" || len(all) != 6 {
		t.Fatalf("%d operations; kinds (-want +got):\n%s", len(all), diff)
	}
	if !slices.IsSortedFunc(all, opsNewestFirst(t)) {
		t.Fatalf("not newest first: %v", ids(all))
	}
	for _, it := range all {
		polled := e.Do("GET", "/api/v1/operations/"+it["id"].(string), tok, nil).JSON(t)
		if diff := cmp.Diff(polled, it); diff != "" {
			t.Errorf("item vs GET /operations/%v (-get +item):\n%s", it["id"], diff)
		}
	}
}

// A token lists exactly the operations it could poll: for each scope, an
// operation is in the list if and only if GET /operations/{id} answers it.
// A release operation needs a releases key; so an AI key sees node cache
// copies and removals and project provisioning (which get-operation lets
// it poll), never a promotion nor a data copy.
func TestOperations_List_VisibilityPerScope_ExactlyWhatTheTokenCouldPoll(t *testing.T) {
	t.Parallel()
	e, tok := opsWorld(t)
	all := walkPages(t, e, tok, "/api/v1/operations", url.Values{})
	for _, c := range []struct {
		scope string
		kinds []string
	}{
		{resources.PermAIRead, []string{"node_cache_copy", "node_cache_remove", "project_provision"}},
		{resources.PermProjectsRead, []string{"node_cache_copy", "node_cache_remove", "project_provision"}},
		{resources.PermReleasesRead, sortedKinds()},
		{resources.PermAIWrite, []string{"node_cache_copy", "node_cache_remove", "project_provision"}},
	} {
		t.Run(c.scope, func(t *testing.T) {
			scoped := e.Token(c.scope)
			var pollable []string
			for _, it := range all {
				if e.Do("GET", "/api/v1/operations/"+it["id"].(string), scoped, nil).Status == 200 {
					pollable = append(pollable, it["id"].(string))
				}
			}
			listed := walkPages(t, e, scoped, "/api/v1/operations", url.Values{"limit": {"2"}})
			if diff := cmp.Diff(pollable, ids(listed)); diff != "" {
				t.Fatalf("listed vs pollable (-pollable +listed):\n%s", diff)
			}
			if diff := cmp.Diff(c.kinds, kindsOf(listed)); diff != "" {
				t.Fatalf("kinds (-want +got):\n%s", diff)
			}
		})
	}
	aiOnly := e.Token(resources.PermAIRead)
	for _, kind := range []string{"release_promotion", "data_copy", "node_cache_copy,release_promotion"} {
		p := assertProblem(t, e.Do("GET", "/api/v1/operations?kind="+kind, aiOnly, nil), 403, "forbidden")
		if diff := cmp.Diff(releasesKeys, p["required"]); diff != "" {
			t.Fatalf("kind=%s: required (-want +got):\n%s", kind, diff)
		}
	}
	assertProblem(t, e.Do("GET", "/api/v1/operations", e.Token(resources.PermTenancyRead), nil), 403, "forbidden")
}

func sortedKinds() []string { return slices.Sorted(slices.Values(resources.OperationKinds)) }

func TestOperations_List_FiltersEachAndCombined_ExactlyTheMatchingItems(t *testing.T) {
	t.Parallel()
	e, tok := opsWorld(t)
	all := walkPages(t, e, tok, "/api/v1/operations", url.Values{})
	project := all[len(all)-1]["target"].(map[string]any)["id"].(string) // the oldest: the provisioning
	since := all[4]["created_at"].(string)                               // the succeeded promotion
	target := func(it map[string]any) map[string]any { return it["target"].(map[string]any) }
	for _, c := range []struct {
		name  string
		query url.Values
		match func(it map[string]any) bool
		n     int
	}{
		{"kind", url.Values{"kind": {"release_promotion"}}, func(it map[string]any) bool {
			return it["kind"] == "release_promotion"
		}, 2},
		{"status across kinds", url.Values{"status": {"succeeded"}}, func(it map[string]any) bool {
			return it["status"] == "succeeded"
		}, 4},
		{"target_type", url.Values{"target_type": {"node_cache"}}, func(it map[string]any) bool {
			return target(it)["type"] == "node_cache"
		}, 2},
		{"target_id of a project: its provisioning and release operations", url.Values{"target_id": {project}},
			func(it map[string]any) bool { return target(it)["id"] == project }, 4},
		{"target_id spelled otherwise matches nothing", url.Values{"target_id": {"0" + project}},
			func(map[string]any) bool { return false }, 0},
		{"since", url.Values{"since": {since}}, func(it map[string]any) bool {
			return !createdAt(t, it).Before(createdAt(t, all[4]))
		}, 5},
		{"combined", url.Values{"target_type": {"project"}, "status": {"succeeded"}, "since": {since}},
			func(it map[string]any) bool {
				return target(it)["type"] == "project" && it["status"] == "succeeded" &&
					!createdAt(t, it).Before(createdAt(t, all[4]))
			}, 1},
		{"awaiting_operator: the data copy", url.Values{"status": {"awaiting_operator"}, "kind": {"data_copy"}},
			func(it map[string]any) bool { return it["kind"] == "data_copy" }, 1},
		{"several kinds and statuses: any of them", url.Values{"kind": {"release_promotion,node_cache_copy"},
			"status": {"succeeded,failed"}}, func(it map[string]any) bool {
			return (it["kind"] == "release_promotion" || it["kind"] == "node_cache_copy") &&
				(it["status"] == "succeeded" || it["status"] == "failed")
		}, 3},
		{"both target types", url.Values{"target_type": {"node_cache,project"}},
			func(map[string]any) bool { return true }, len(all)},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := []map[string]any{}
			for _, it := range all {
				if c.match(it) {
					want = append(want, it)
				}
			}
			got := walkPages(t, e, tok, "/api/v1/operations", c.query)
			if diff := cmp.Diff(want, append([]map[string]any{}, got...)); diff != "" || len(got) != c.n {
				t.Fatalf("%d items, want %d (-want +got):\n%s", len(got), c.n, diff)
			}
		})
	}
}

// Operations and release operations created at the same instants (both
// tables, several rows each) page in the promised order with any page
// size: no duplicate, no gap, and filters keep the order.
func TestOperations_List_PagesAcrossKindsAndTies_NoDuplicateNoGap(t *testing.T) {
	t.Parallel()
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	for _, at := range []string{"2026-01-01T00:00:00Z", "2026-01-02T00:00:00.5Z", "2026-01-03T00:00:00.123456Z"} {
		execSQL(t, e, `INSERT INTO operations (kind, status, target_type, target_id, error, created_at, updated_at)
			SELECT (ARRAY['node_cache_copy', 'node_cache_remove', 'project_provision'])[n % 3 + 1],
			       CASE WHEN n % 2 = 0 THEN 'failed' ELSE 'succeeded' END, 'node_cache', 'gpu-0' || n || '/1',
			       CASE WHEN n % 2 = 0 THEN '{"code":"checksum_mismatch","detail":"bad"}'::jsonb END, ?, ?
			FROM generate_series(1, 7) n`, at, at)
		execSQL(t, e, `INSERT INTO release_operations (project_id, kind, component, target_env, version,
			       status, requested_by, requested_via, created_at, updated_at)
			SELECT ?, 'promotion', 'www', 'dev', '1.' || n,
			       CASE WHEN n % 3 = 0 THEN 'failed' ELSE 'succeeded' END, 'a@example.test', 'api', ?, ?
			FROM generate_series(1, 6) n`, parseInt(t, pid), at, at)
	}
	for _, q := range []url.Values{{}, {"status": {"failed"}}, {"since": {"2026-01-02T00:00:00.5Z"}}} {
		whole := walkPages(t, e, tok, "/api/v1/operations", cloneQuery(q))
		if !slices.IsSortedFunc(whole, opsNewestFirst(t)) {
			t.Fatalf("%v: not newest first: %v", q, ids(whole))
		}
		seen := map[string]bool{}
		for _, id := range ids(whole) {
			if seen[id] {
				t.Fatalf("%v: %s twice", q, id)
			}
			seen[id] = true
		}
		for _, size := range []string{"1", "2", "5", "7"} {
			q := cloneQuery(q)
			q.Set("limit", size)
			if paged := ids(walkPages(t, e, tok, "/api/v1/operations", q)); !slices.Equal(paged, ids(whole)) {
				t.Fatalf("%v: pages of %s %v, one page %v", q, size, paged, ids(whole))
			}
		}
	}
	if n := len(walkPages(t, e, tok, "/api/v1/operations", url.Values{})); n != 3*7+3*6+1 {
		t.Fatalf("%d operations, want %d", n, 3*7+3*6+1)
	}
}

func TestOperations_List_BadParameter_400InvalidParameterNamingIt(t *testing.T) {
	t.Parallel()
	e, tok := projectEnv(t)
	for _, c := range []struct{ query, field string }{
		{"kind=release", "kind"}, {"kind=", "kind"}, {"status=done", "status"}, {"status=", "status"},
		{"target_type=node", "target_type"}, {"target_type=", "target_type"}, {"target_id=", "target_id"},
		{"since=yesterday", "since"}, {"since=2026-13-01T00:00:00Z", "since"}, {"since=2026-11-01", "since"},
		{"since=", "since"}, {"limit=0", "limit"}, {"limit=201", "limit"},
		{"kind=data_copy&kind=data_copy", "kind"},
	} {
		t.Run(c.query, func(t *testing.T) {
			r := e.Do("GET", "/api/v1/operations?"+c.query, tok, nil)
			p := assertProblem(t, r, 400, "invalid_parameter")
			if p["field"] != c.field {
				t.Fatalf("field %v, want %s", p["field"], c.field)
			}
		})
	}
	assertProblem(t, e.Do("GET", "/api/v1/operations?cursor=abc", tok, nil), 400, "invalid_cursor")
	// An offset's + sent unencoded arrives as a space: the detail says what a
	// time looks like and how to send the +, not Go's layout string.
	p := assertProblem(t, e.Do("GET", "/api/v1/operations?since=2026-11-01T00:00:00+02:00", tok, nil),
		400, "invalid_parameter")
	if d := p["detail"].(string); !strings.Contains(d, "RFC 3339") || !strings.Contains(d, "%2B") ||
		strings.Contains(d, "2006") {
		t.Fatalf("detail %q", d)
	}
	execSQL(t, e, `INSERT INTO operations (kind, status, target_type, target_id)
		SELECT 'project_provision', 'failed', 'project', n::text FROM generate_series(1, 2) n`)
	next, _ := e.Do("GET", "/api/v1/operations?limit=1", tok, nil).JSON(t)["next_cursor"].(string)
	for _, q := range []string{"status=failed&", "kind=project_provision&", "since=2000-01-01T00:00:00Z&"} {
		assertProblem(t, e.Do("GET", "/api/v1/operations?"+q+"cursor="+url.QueryEscape(next), tok, nil),
			400, "invalid_cursor")
	}
}

// The kind filter's enum is the catalogue of kinds (resources.OperationKinds),
// so a new kind cannot be listed without being filterable.
func TestOperations_List_KindFilterEnumeratesEveryKind(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	doc := e.Do("GET", "/api/v1/openapi.json", "", nil).JSON(t)
	get := doc["paths"].(map[string]any)["/operations"].(map[string]any)["get"].(map[string]any)
	var enum []any
	for _, p := range get["parameters"].([]any) {
		if p := p.(map[string]any); p["name"] == "kind" {
			enum = p["schema"].(map[string]any)["items"].(map[string]any)["enum"].([]any) // multi-value
		}
	}
	var want []any
	for _, k := range resources.OperationKinds {
		want = append(want, k)
	}
	if diff := cmp.Diff(want, enum); diff != "" {
		t.Fatalf("kind enum (-catalogue +declared):\n%s", diff)
	}
}

// TestOperations_List_CursorBoundToTheFilterSetNotItsOrder: a cursor is
// bound to the filters asked for as a set, so the next page asked with the
// same values in another order (a client that rebuilds its query, an agent
// that lists them anew) continues the list instead of 400 invalid_cursor.
func TestOperations_List_CursorBoundToTheFilterSetNotItsOrder(t *testing.T) {
	t.Parallel()
	e, tok := opsWorld(t)
	first := e.Do("GET", "/api/v1/operations?status=succeeded,failed"+
		"&kind=release_promotion,project_provision&limit=1", tok, nil).JSON(t)
	next, _ := first["next_cursor"].(string)
	if next == "" {
		t.Fatalf("no second page: %v", first)
	}
	page := func(q string) *apitest.Response {
		return e.Do("GET", "/api/v1/operations?"+q+"&limit=1&cursor="+url.QueryEscape(next), tok, nil)
	}
	want := page("status=succeeded,failed&kind=release_promotion,project_provision")
	got := page("kind=project_provision,release_promotion&status=failed,succeeded")
	if want.Status != 200 || got.Status != 200 || string(got.Body) != string(want.Body) {
		t.Fatalf("same filters, order kept: %d %s\nother order: %d %s", want.Status, want.Body,
			got.Status, got.Body)
	}
}

package api_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// walkPages lists path with the query from its first page to its last,
// following next_cursor, and returns every item in order.
func walkPages(t *testing.T, e *apitest.Env, tok, path string, query url.Values) []map[string]any {
	t.Helper()
	var out []map[string]any
	for pages := 0; ; pages++ {
		r := e.Do("GET", path+"?"+query.Encode(), tok, nil)
		if r.Status != 200 || pages > 200 {
			t.Fatalf("GET %s?%s: %d %s", path, query.Encode(), r.Status, r.Body)
		}
		page := r.JSON(t)
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any))
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return out
		}
		query = cloneQuery(query)
		query.Set("cursor", next)
	}
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	return out
}

// fleetWorld holds two customers' projects with release operations of every
// status the per-project list filters on: SHOP (ACME) with app-api through
// dev and uat, a prod request awaiting approval and a failed www dev
// release; BETA1 (BETA) with a www dev release and a data copy booked in
// the portal. It returns the two project ids and the customer ids.
func fleetWorld(t *testing.T) (e *apitest.Env, tok string, shop, beta, acmeID, betaID string) {
	t.Helper()
	e, tok = projectEnv(t)
	shop, acmeID = activeProject(t, e, tok, "", nil)
	betaID = createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))["id"].(string)
	beta, _ = activeProject(t, e, tok, betaID, shop2("BETA1"))
	inUAT(t, e, tok, shop, "1.0.0")
	prodRequest(t, e, tok, shop)
	e.Pipeline.FailNext(1)
	failed := acceptedPromotion(t, postPromotion(e, tok, shop, promotion("www", "dev", "0.9.0")))
	apitest.PollOperation(t, e, tok, failed["id"].(string), "failed")
	deployed(t, e, tok, beta, "www", "dev", "2.0.0")
	bookDataCopy(t, e, beta)
	return e, tok, shop, beta, acmeID, betaID
}

// bookDataCopy books a data copy from uat into dev of the project in the
// portal (awaiting an operator).
func bookDataCopy(t *testing.T, e *apitest.Env, pid string) {
	t.Helper()
	_, err := e.Store.BookDataCopy(context.Background(), resources.Actor{Label: apitest.AdminEmail}, parseInt(t, pid), "uat", "dev")
	if err != nil {
		t.Fatal(err)
	}
}

// releasesKeys are the keys a 403 names for release operations.
var releasesKeys = []any{resources.PermReleasesRead, resources.PermReleasesWrite}

// has matches the items whose member equals the value.
func has(member string, value any) func(map[string]any) bool {
	return func(it map[string]any) bool { return it[member] == value }
}

// shop2 is a second cluster project's create body.
func shop2(short string) map[string]any {
	return shop("", "short_name", short, "name", "Project "+short)
}

func ids(items []map[string]any) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

// createdAt is an item's created_at.
func createdAt(t *testing.T, it map[string]any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, it["created_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// newestFirst orders release operations as the lists promise: created_at,
// then id, descending.
func newestFirst(t *testing.T) func(a, b map[string]any) int {
	return func(a, b map[string]any) int {
		if c := createdAt(t, b).Compare(createdAt(t, a)); c != 0 {
			return c
		}
		return int(parseInt(t, b["id"].(string)) - parseInt(t, a["id"].(string)))
	}
}

func TestFleetReleases_EveryProjectNewestFirst_EachItemAsGetAndTheProjectsList(t *testing.T) {
	t.Parallel()
	e, tok, shop, beta, acmeID, betaID := fleetWorld(t)
	all := walkPages(t, e, tok, "/api/v1/release-operations", url.Values{"limit": {"200"}})
	perProject := append(walkPages(t, e, tok, "/api/v1/projects/"+shop+"/release-operations", url.Values{}),
		walkPages(t, e, tok, "/api/v1/projects/"+beta+"/release-operations", url.Values{})...)
	slices.SortStableFunc(perProject, newestFirst(t))
	if diff := cmp.Diff(perProject, all); diff != "" || len(all) != 6 {
		t.Fatalf("%d items; fleet list vs the per-project lists merged (-merged +fleet):\n%s", len(all), diff)
	}
	owner := map[string][2]string{shop: {"SHOP", acmeID}, beta: {"BETA1", betaID}}
	for _, it := range all {
		want := owner[it["project_id"].(string)]
		if it["project_short_name"] != want[0] || it["customer_id"] != want[1] {
			t.Errorf("release operation %v: project %v, short name %v, customer %v", it["id"], it["project_id"],
				it["project_short_name"], it["customer_id"])
		}
		if diff := cmp.Diff(releaseOp(t, e, tok, parseInt(t, it["id"].(string))), it); diff != "" {
			t.Errorf("item vs GET /release-operations/%v (-get +item):\n%s", it["id"], diff)
		}
	}
	open := e.Do("GET", "/api/v1/projects/"+shop+"/release-state", tok, nil).JSON(t)["open_operations"].([]any)
	if len(open) != 1 || open[0].(map[string]any)["project_short_name"] != "SHOP" ||
		open[0].(map[string]any)["customer_id"] != acmeID {
		t.Fatalf("release state's open operations: %v", open)
	}
}

func TestFleetReleases_FiltersEachAndCombined_ExactlyTheMatchingItems(t *testing.T) {
	t.Parallel()
	e, tok, shop, beta, acmeID, betaID := fleetWorld(t)
	all := walkPages(t, e, tok, "/api/v1/release-operations", url.Values{})
	for _, c := range []struct {
		name  string
		query url.Values
		want  func(it map[string]any) bool
		n     int
	}{
		{"status", url.Values{"status": {"awaiting_approval"}}, has("status", "awaiting_approval"), 1},
		{"target_env", url.Values{"target_env": {"dev"}}, has("target_env", "dev"), 4},
		{"component excludes data copies", url.Values{"component": {"www"}}, has("component", "www"), 2},
		{"project_id", url.Values{"project_id": {beta}}, has("project_id", beta), 2},
		{"customer_id", url.Values{"customer_id": {acmeID}}, has("customer_id", acmeID), 4},
		{"combined", url.Values{"customer_id": {acmeID}, "status": {"succeeded"}, "target_env": {"dev"}},
			func(it map[string]any) bool {
				return it["customer_id"] == acmeID && it["status"] == "succeeded" && it["target_env"] == "dev"
			}, 1},
		{"project of another customer", url.Values{"project_id": {shop}, "customer_id": {betaID}},
			func(map[string]any) bool { return false }, 0},
		{"unknown project", url.Values{"project_id": {"999"}}, func(map[string]any) bool { return false }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := []map[string]any{}
			for _, it := range all {
				if c.want(it) {
					want = append(want, it)
				}
			}
			got := walkPages(t, e, tok, "/api/v1/release-operations", c.query)
			if diff := cmp.Diff(want, append([]map[string]any{}, got...)); diff != "" || len(got) != c.n {
				t.Fatalf("%d items, want %d (-want +got):\n%s", len(got), c.n, diff)
			}
		})
	}
}

// A data copy booked in the portal is awaiting_operator until an operator
// carries it out; both lists answer it, so both filter on it (the status
// filter refused the value, and an agent could not ask for what waits for an
// operator).
func TestReleases_StatusAwaitingOperator_TheDataCopyBookedInThePortal(t *testing.T) {
	t.Parallel()
	e, tok, _, beta, _, _ := fleetWorld(t)
	lists := []string{"/api/v1/release-operations", "/api/v1/projects/" + beta + "/release-operations"}
	for _, path := range lists {
		got := walkPages(t, e, tok, path, url.Values{"status": {"awaiting_operator"}})
		want := []map[string]any{}
		for _, it := range walkPages(t, e, tok, path, url.Values{}) {
			if it["kind"] == "data_copy" && it["status"] == "awaiting_operator" {
				want = append(want, it)
			}
		}
		if d := cmp.Diff(want, append([]map[string]any{}, got...)); d != "" || len(got) != 1 {
			t.Fatalf("%s?status=awaiting_operator: %d items (-want +got):\n%s", path, len(got), d)
		}
	}
}

func TestFleetReleases_PagesOfOne_NoDuplicateNoGap_CursorBoundToFilters(t *testing.T) {
	t.Parallel()
	e, tok, _, _, acmeID, _ := fleetWorld(t)
	for _, q := range []url.Values{{}, {"customer_id": {acmeID}}, {"target_env": {"dev"}}} {
		whole := ids(walkPages(t, e, tok, "/api/v1/release-operations", cloneQuery(q)))
		q.Set("limit", "1")
		if paged := ids(walkPages(t, e, tok, "/api/v1/release-operations", q)); !slices.Equal(paged, whole) {
			t.Fatalf("%v: pages of one %v, one page %v", q, paged, whole)
		}
	}
	first := e.Do("GET", "/api/v1/release-operations?limit=2", tok, nil).JSON(t)
	cursor := url.QueryEscape(first["next_cursor"].(string))
	for _, path := range []string{"/api/v1/release-operations?status=failed&cursor=" + cursor,
		"/api/v1/operations?cursor=" + cursor, "/api/v1/release-operations?cursor=x" + cursor} {
		assertProblem(t, e.Do("GET", path, tok, nil), 400, "invalid_cursor")
	}
}

func TestFleetReleases_BadParameter_400InvalidParameterNamingIt(t *testing.T) {
	t.Parallel()
	e, tok := projectEnv(t)
	for _, c := range []struct{ query, field string }{
		{"status=queued", "status"}, {"status=", "status"}, {"target_env=staging", "target_env"},
		{"component=api", "component"}, {"component=", "component"}, {"project_id=0", "project_id"},
		{"project_id=", "project_id"}, {"customer_id=abc", "customer_id"},
		{"customer_id=1234567890", "customer_id"},
		{"limit=0", "limit"}, {"limit=201", "limit"}, {"status=failed&status=running", "status"},
	} {
		t.Run(c.query, func(t *testing.T) {
			r := e.Do("GET", "/api/v1/release-operations?"+c.query, tok, nil)
			p := assertProblem(t, r, 400, "invalid_parameter")
			if p["field"] != c.field {
				t.Fatalf("field %v, want %s", p["field"], c.field)
			}
		})
	}
}

func TestFleetReleases_WithoutAReleasesKey_403NamingTheKeys(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	for _, scope := range []string{resources.PermProjectsRead, resources.PermAIRead} {
		p := assertProblem(t, e.Do("GET", "/api/v1/release-operations", e.Token(scope), nil), 403, "forbidden")
		if diff := cmp.Diff(releasesKeys, p["required"]); diff != "" {
			t.Fatalf("%s: required (-want +got):\n%s", scope, diff)
		}
	}
	for _, scope := range []string{resources.PermReleasesRead, resources.PermReleasesWrite} {
		if r := e.Do("GET", "/api/v1/release-operations", e.Token(scope), nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", scope, r.Status, r.Body)
		}
	}
}

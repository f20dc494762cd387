package api_test

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"platformapi/api/apitest"
)

func modelRepos(t *testing.T, m map[string]any) []string {
	t.Helper()
	var out []string
	for _, it := range m["items"].([]any) {
		out = append(out, it.(map[string]any)["repo"].(string))
	}
	return out
}

func TestAIModels_List_ExactFiltersCombineAndQSearchesRepoNameSummary(t *testing.T) {
	e, tok := aiEnv(t)
	createModel(t, e, tok, map[string]any{"repo": "qwen/Qwen3-Coder", "category": "coding", "vendor": "Alibaba", "org": "qwen",
		"gateway_tier": "pro", "serving_node": "gpu-01", "summary": "Agentic 100% coder"})
	createModel(t, e, tok, map[string]any{"repo": "meta-llama/Llama-3", "category": "general", "vendor": "Meta",
		"org": "meta-llama", "gateway_tier": "basic", "gated": true, "display_name": "Llama Three"})
	id := createModel(t, e, tok, map[string]any{"repo": "unsloth/Qwen3-8B-GGUF", "category": "general", "vendor": "Alibaba",
		"org": "unsloth", "gateway_tier": "basic", "serving_node": "gpu-02"})["id"]
	aiSQL(t, e, "UPDATE ai_models SET status = 'owned' WHERE id = ?", id)
	q, l, u := "qwen/Qwen3-Coder", "meta-llama/Llama-3", "unsloth/Qwen3-8B-GGUF"
	for query, want := range map[string][]string{"": {q, l, u}, "?status=planned": {q, l}, "?status=owned": {u},
		"?category=general": {l, u}, "?vendor=Alibaba": {q, u}, "?vendor=alibaba": nil, "?org=qwen": {q},
		"?gateway_tier=basic": {l, u}, "?serving_node=gpu-02": {u}, "?gated=true": {l}, "?gated=false": {q, u},
		"?q=QWEN3": {q, u}, "?q=three": {l}, "?q=100%25+CODER": {q}, "?q=_": nil, "?q=%25": {q},
		"?vendor=Alibaba&category=general&gated=false": {u}, "?vendor=Meta&status=owned": nil,
	} {
		r := e.Do("GET", "/api/v1/ai/models"+query, tok, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		if got := modelRepos(t, r.JSON(t)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}
	for _, query := range []string{"?gated=maybe", "?sort=name", "?order=up", "?limit=201", "?colour=red"} {
		assertProblem(t, e.Do("GET", "/api/v1/ai/models"+query, tok, nil), 400, "invalid_parameter")
	}
}

// sortKey orders catalogue items as the list must: by the sort value with
// nulls last in either direction, then by id in the same direction.
func sortKey(sort string, desc bool) func(a, b map[string]any) int {
	return func(a, b map[string]any) int {
		d := 1
		if desc {
			d = -1
		}
		if sort != "id" {
			va, vb := a[sort], b[sort]
			switch {
			case va == nil && vb != nil:
				return 1
			case va != nil && vb == nil:
				return -1
			case va != nil && va.(float64) != vb.(float64):
				return d * cmp.Compare(va.(float64), vb.(float64))
			}
		}
		ia, _ := strconv.ParseInt(a["id"].(string), 10, 64)
		ib, _ := strconv.ParseInt(b["id"].(string), 10, 64)
		return d * cmp.Compare(ia, ib)
	}
}

func TestAIModels_List_EverySortPagesByKeysetWhileRowsAreInserted(t *testing.T) {
	for _, sc := range []struct{ sort, order string }{{"id", "asc"}, {"id", "desc"}, {"param_count_b", "asc"},
		{"param_count_b", "desc"}, {"size_gb", "asc"}, {"size_gb", "desc"}} {
		t.Run(sc.sort+"_"+sc.order, func(t *testing.T) {
			e, tok := aiEnv(t)
			add := func(name string, v any) string {
				return createModel(t, e, tok, map[string]any{"repo": "s/" + name, "param_count_b": v, "size_gb": v})["id"].(string)
			}
			for i, v := range []any{7, nil, 1.5, 7, 0, nil, 30, 1.5, 0.1 + 0.2} {
				add(fmt.Sprintf("m%d", i), v)
			}
			query := "/api/v1/ai/models?limit=2&sort=" + sc.sort + "&order=" + sc.order
			var seen []string
			inserted := map[string]string{} // new id → id of the last item seen before it was added
			for page, cursor := 0, ""; ; page++ {
				r := e.Do("GET", query+apitest.CursorParam(cursor), tok, nil)
				if r.Status != 200 {
					t.Fatalf("page %d: %d %s", page, r.Status, r.Body)
				}
				m := r.JSON(t)
				for _, it := range m["items"].([]any) {
					seen = append(seen, it.(map[string]any)["id"].(string))
				}
				if m["next_cursor"] == nil {
					break
				}
				if page < 3 { // rows ahead of the position must show up, rows behind it must not
					last := seen[len(seen)-1]
					inserted[add(fmt.Sprintf("mid%d", page), 5)] = last
					inserted[add(fmt.Sprintf("null%d", page), nil)] = last
				}
				cursor = m["next_cursor"].(string)
			}
			checkKeysetPages(t, e, tok, sc.sort, sc.order == "desc", seen, inserted)
		})
	}
}

// checkKeysetPages compares the paged ids with the whole list read at once:
// the same order, every row that existed before paging, and exactly the rows
// added later that sort after the position paging had reached.
func checkKeysetPages(t *testing.T, e *apitest.Env, tok, sort string, desc bool, seen []string, inserted map[string]string) {
	t.Helper()
	var all []map[string]any
	for _, it := range e.Do("GET", "/api/v1/ai/models?limit=200&sort="+sort+"&order="+map[bool]string{true: "desc", false: "asc"}[desc],
		tok, nil).JSON(t)["items"].([]any) {
		all = append(all, it.(map[string]any))
	}
	if !slices.IsSortedFunc(all, sortKey(sort, desc)) {
		t.Fatalf("whole list not in %s order: %v", sort, all)
	}
	pos := map[string]int{}
	for i, it := range all {
		pos[it["id"].(string)] = i
	}
	var want []string
	for _, it := range all {
		id := it["id"].(string)
		if after, added := inserted[id]; !added || pos[id] > pos[after] {
			want = append(want, id)
		}
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("paged %v, want %v", seen, want)
	}
}

func TestAIModels_List_CursorBoundToSortOrderAndFilters_400InvalidCursor(t *testing.T) {
	e, tok := aiEnv(t)
	for i := range 3 {
		createModel(t, e, tok, map[string]any{"repo": fmt.Sprintf("c/m%d", i), "size_gb": i})
	}
	base := "/api/v1/ai/models?limit=1"
	cursor := e.Do("GET", base+"&sort=size_gb", tok, nil).JSON(t)["next_cursor"].(string)
	for _, other := range []string{"", "&sort=param_count_b", "&sort=id", "&sort=size_gb&order=desc", "&sort=size_gb&q=c",
		"&sort=size_gb&gated=false"} {
		assertProblem(t, e.Do("GET", base+other+"&cursor="+cursor, tok, nil), 400, "invalid_cursor")
	}
	if got := modelRepos(t, e.Do("GET", base+"&sort=size_gb&order=asc&cursor="+cursor, tok, nil).JSON(t)); !slices.Equal(got, []string{"c/m1"}) {
		t.Fatalf("same sort, explicit default order: %v", got)
	}
	assertProblem(t, e.Do("GET", base+"&cursor=bm90LWEtY3Vyc29y", tok, nil), 400, "invalid_cursor")
}

// TestAIModels_List_StatusTakesCommaSeparatedValues: the catalogue's status
// is an open list like an AI node's, and a status filter takes several values
// comma-separated (DESIGN, fleet-wide reads); an empty item is 400 naming it.
func TestAIModels_List_StatusTakesCommaSeparatedValues(t *testing.T) {
	e, tok := aiEnv(t)
	p := createModel(t, e, tok, map[string]any{"repo": "acme/planned"})["repo"].(string)
	o := createModel(t, e, tok, map[string]any{"repo": "acme/owned"})
	s := createModel(t, e, tok, map[string]any{"repo": "acme/serving"})
	aiSQL(t, e, "UPDATE ai_models SET status = 'owned' WHERE id = ?", o["id"])
	aiSQL(t, e, "UPDATE ai_models SET status = 'serving' WHERE id = ?", s["id"])
	for query, want := range map[string][]string{
		"?status=planned,owned": {p, o["repo"].(string)}, "?status=serving": {s["repo"].(string)},
		"?status=owned,serving&sort=id&order=desc": {s["repo"].(string), o["repo"].(string)},
		"?status=pulling,unknown_state":            nil,
	} {
		r := e.Do("GET", "/api/v1/ai/models"+query, tok, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		if got := modelRepos(t, r.JSON(t)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}
	for _, query := range []string{"?status=owned,", "?status=,owned", "?status=owned,,planned"} {
		r := e.Do("GET", "/api/v1/ai/models"+query, tok, nil)
		assertProblem(t, r, 400, "invalid_parameter")
		if f := r.JSON(t)["field"]; f != "status" {
			t.Errorf("%s: field %v, want status", query, f)
		}
	}
}

// The status filter is a set: a cursor issued for status=planned,owned
// continues the same list when the values come in another order (as the
// multi-value filters of the other lists do), and a value given twice
// counts once.
func TestAIModels_List_StatusCursorBoundToTheSetNotItsOrder(t *testing.T) {
	e, tok := aiEnv(t)
	var want []string
	for _, repo := range []string{"acme/a", "acme/b", "acme/c"} {
		want = append(want, createModel(t, e, tok, map[string]any{"repo": repo})["repo"].(string))
	}
	first := e.Do("GET", "/api/v1/ai/models?limit=1&status=planned,owned", tok, nil).JSON(t)
	got := modelRepos(t, first)
	next := first["next_cursor"].(string)
	for _, status := range []string{"owned,planned", "planned,owned,planned"} {
		r := e.Do("GET", "/api/v1/ai/models?limit=5&status="+status+apitest.CursorParam(next), tok, nil)
		if r.Status != 200 {
			t.Fatalf("status=%s with the cursor of planned,owned: %d %s", status, r.Status, r.Body)
		}
		if rest := modelRepos(t, r.JSON(t)); !slices.Equal(append(slices.Clone(got), rest...), want) {
			t.Fatalf("status=%s: %v then %v, want %v", status, got, rest, want)
		}
	}
}

package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
)

// cacheWorld holds four models on nodeRoster's nodes, their caches written
// by SQL (the statuses a copy, a removal and the reconcile leave): ready
// has a ready cache; copying only a copy running; mixed a missing and a
// ready one; bare none at all. It returns their ids by name.
func cacheWorld(t *testing.T, e *apitest.Env, tok string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, name := range []string{"ready", "copying", "mixed", "bare"} {
		ids[name] = createModel(t, e, tok, map[string]any{"repo": "org/" + name})["id"].(string)
	}
	for _, c := range []struct{ host, model, status string }{
		{"gpu-01", "ready", "ready"}, {"gpu-02", "ready", "removing"}, {"gpu-01", "copying", "copying"},
		{"gpu-01", "mixed", "missing"}, {"gpu-02", "mixed", "ready"},
	} {
		aiSQL(t, e, "INSERT INTO node_caches (hostname, model_id, status) VALUES (?, ?, ?)", c.host, ids[c.model], c.status)
	}
	return ids
}

func TestAIModels_CachedFilter_ReadyOnSomeNodeOrOnNone(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	cacheWorld(t, e, tok)
	for query, want := range map[string][]string{
		"?cached=ready":                {"org/ready", "org/mixed"},
		"?cached=none":                 {"org/copying", "org/bare"},
		"?cached=none&q=bare":          {"org/bare"},
		"?cached=ready&status=planned": {"org/ready", "org/mixed"},
		"?cached=none&limit=1&sort=id": {"org/copying"},
	} {
		t.Run(query, func(t *testing.T) {
			r := e.Do("GET", "/api/v1/ai/models"+query, tok, nil)
			if diff := cmp.Diff(want, modelRepos(t, r.JSON(t))); r.Status != 200 || diff != "" {
				t.Fatalf("%d (-want +got):\n%s", r.Status, diff)
			}
		})
	}
	first := e.Do("GET", "/api/v1/ai/models?cached=none&limit=1", tok, nil).JSON(t)
	next := e.Do("GET", "/api/v1/ai/models?cached=none&limit=1&cursor="+first["next_cursor"].(string), tok, nil).JSON(t)
	if diff := cmp.Diff([]string{"org/bare"}, modelRepos(t, next)); diff != "" || next["next_cursor"] != nil {
		t.Fatalf("second page (-want +got):\n%s", diff)
	}
	assertProblem(t, e.Do("GET", "/api/v1/ai/models?cached=ready&limit=1&cursor="+first["next_cursor"].(string), tok, nil),
		400, "invalid_cursor")
}

func TestNodeCaches_StatusFilter_EachStatusCombinedWithNodeAndModel(t *testing.T) {
	e, tok := nodeEnv(t, apitest.Options{})
	ids := cacheWorld(t, e, tok)
	type key struct{ Host, Repo, Status string }
	list := func(query string) []key {
		var out []key
		for _, it := range e.Do("GET", "/api/v1/node-caches"+query, tok, nil).JSON(t)["items"].([]any) {
			c := it.(map[string]any)
			out = append(out, key{c["hostname"].(string), c["model_repo"].(string), c["status"].(string)})
		}
		return out
	}
	for query, want := range map[string][]key{
		"?status=ready":                            {{"gpu-01", "org/ready", "ready"}, {"gpu-02", "org/mixed", "ready"}},
		"?status=copying":                          {{"gpu-01", "org/copying", "copying"}},
		"?status=removing":                         {{"gpu-02", "org/ready", "removing"}},
		"?status=missing":                          {{"gpu-01", "org/mixed", "missing"}},
		"?status=ready&hostname=gpu-02":            {{"gpu-02", "org/mixed", "ready"}},
		"?status=ready&model_id=" + ids["copying"]: nil,
	} {
		t.Run(query, func(t *testing.T) {
			if diff := cmp.Diff(want, list(query)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

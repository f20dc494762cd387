package tools

import (
	"net/http"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestMCP_FleetReads_SameAsRESTPerScope: the two fleet-wide lists answer an
// agent exactly what REST answers the same token, in one call each; a
// token with only an AI key lists no release operation and is refused the
// release kinds with REST's 403.
func TestMCP_FleetReads_SameAsRESTPerScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	admin := populate(t, e)
	apitest.PollOperation(t, e.api, admin, "release:1", "succeeded")
	for _, c := range []struct {
		scope, tool, path string
		args              map[string]any
	}{
		{resources.PermReleasesRead, "list-fleet-release-operations", "/release-operations?target_env=dev",
			map[string]any{"target_env": "dev"}},
		{resources.PermReleasesRead, "list-operations", "/operations", map[string]any{}},
		{resources.PermAIRead, "list-operations", "/operations?status=succeeded",
			map[string]any{"status": "succeeded"}},
	} {
		t.Run(c.scope+" "+c.tool, func(t *testing.T) {
			tok := e.token(c.scope)
			auth := map[string]string{"Authorization": "Bearer " + tok}
			rest := e.do(http.MethodGet, api.Prefix+c.path, auth, "")
			if rest.status != http.StatusOK {
				t.Fatalf("REST: %d %s", rest.status, rest.body)
			}
			res := call(t, e.client(tok, nil, false), c.tool, c.args)
			if res.IsError || resultText(t, res) != string(rest.body) {
				t.Fatalf("MCP %q, REST %q", resultText(t, res), rest.body)
			}
			items := res.StructuredContent.(map[string]any)["items"].([]any)
			if len(items) == 0 {
				t.Fatal("nothing listed")
			}
			releases := strings.Contains(resultText(t, res), `"release:1"`)
			if want := c.scope == resources.PermReleasesRead; releases != want {
				t.Fatalf("release:1 listed %v, want %v: %s", releases, want, resultText(t, res))
			}
		})
	}
	res := call(t, e.client(e.token(resources.PermAIRead), nil, false), "list-operations",
		map[string]any{"kind": "release_promotion"})
	p := res.StructuredContent.(map[string]any)
	if !res.IsError || p["code"] != "forbidden" || p["status"] != 403.0 {
		t.Fatalf("kind=release_promotion with an AI key: %v", p)
	}
}

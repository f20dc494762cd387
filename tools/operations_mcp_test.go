package tools

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/resources"
)

// TestMCP_FailedOperation_ErrorIsAProblemDocument: an agent polling a
// failed operation with get-operation reads REST's answer, whose error is
// the problem document of its code: type, the code's fixed title, code,
// detail and the operation's path, no status.
func TestMCP_FailedOperation_ErrorIsAProblemDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	var id int64
	if err := e.api.Store.DB().QueryRowContext(t.Context(),
		`INSERT INTO operations (kind, status, target_type, target_id, error, finished_at)
		 VALUES ('node_cache_copy', 'failed', 'node_cache', 'gpu-01/1',
		         '{"code": "checksum_mismatch", "detail": "config.json differs"}', now())
		 RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	tok, opID := e.token(resources.PermAIRead), strconv.FormatInt(id, 10)
	path := api.Prefix + "/operations/" + opID
	rest := e.do(http.MethodGet, path, map[string]string{"Authorization": "Bearer " + tok}, "")
	res := call(t, e.client(tok, nil, false), "get-operation", map[string]any{"operation_id": opID})
	if rest.status != http.StatusOK || res.IsError || resultText(t, res) != string(rest.body) {
		t.Fatalf("MCP %q, REST %d %q", resultText(t, res), rest.status, rest.body)
	}
	want := map[string]any{"type": "urn:svc:api:problem:checksum_mismatch",
		"title": "Checksum mismatch", "code": "checksum_mismatch", "detail": "config.json differs",
		"instance": path}
	if diff := cmp.Diff(want, res.StructuredContent.(map[string]any)["error"]); diff != "" {
		t.Fatalf("error member over MCP (-want +got)\n%s", diff)
	}
}

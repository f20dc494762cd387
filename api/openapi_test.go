package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"platformapi/api/apitest"
)

// checkSnapshot compares got with testdata/name; UPDATE_SNAPSHOTS=1 rewrites
// it. A missing snapshot fails.
func checkSnapshot(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := "testdata/" + name
	if os.Getenv("UPDATE_SNAPSHOTS") == "1" {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("snapshot %s missing (run with UPDATE_SNAPSHOTS=1): %v", path, err)
	}
	if !bytes.Equal(want, pretty.Bytes()) {
		t.Fatalf("%s differs from the served document; review and refresh with UPDATE_SNAPSHOTS=1", path)
	}
}

func TestOpenAPI_Snapshot(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	r := e.Do("GET", "/api/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	checkSnapshot(t, "openapi.json", r.Body)
}

func TestOpenAPI_EveryOperationDeclaresIDPermissionsAndErrors(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct{ Version string }
		Paths   map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Summary     string                     `json:"summary"`
			Security    []map[string][]string      `json:"security"`
			Permissions *[]string                  `json:"x-permissions"`
			Responses   map[string]json.RawMessage `json:"responses"`
			Public      bool                       `json:"x-public"`
			RequestBody json.RawMessage            `json:"requestBody"`
		}
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Fatalf("openapi %s version %s", doc.OpenAPI, doc.Info.Version)
	}
	kebab := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if !kebab.MatchString(op.OperationID) || op.Summary == "" || (len(op.Security) == 0) != op.Public ||
				op.Permissions == nil {
				t.Errorf("%s %s: id %q summary %q security %v", method, path, op.OperationID, op.Summary, op.Security)
			}
			codes := []string{"401", "403", "429", "503", "default"}
			if op.Public { // no token: nothing to refuse it for
				codes = []string{"503", "default"}
			}
			for _, code := range codes {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s %s: no %s response", method, path, code)
				}
			}
			// A bad parameter is 400; only a body can be 422.
			if _, ok := op.Responses["422"]; ok && op.RequestBody == nil {
				t.Errorf("%s %s: 422 declared without a request body", method, path)
			}
		}
	}
}

func TestOpenAPI_YAMLAndDocsServed(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	if r := e.Do("GET", "/api/v1/openapi.yaml", "", nil); r.Status != 200 || !bytes.Contains(r.Body, []byte("openapi: 3.1.0")) {
		t.Fatalf("yaml: %d", r.Status)
	}
	if r := e.Do("GET", "/api/v1/docs", "", nil); r.Status != 200 || !bytes.Contains(r.Body, []byte("openapi.yaml")) {
		t.Fatalf("docs: %d %s", r.Status, r.Body)
	}
}

// namedOperations are the operations the contract names and those whose
// paths DESIGN decides where the contract does not show them ("METHOD
// path", relative to /api/v1).
var namedOperations = []string{
	"GET /whoami", "GET /meta", "GET /permissions", "GET /problems", "GET /operations/{operation_id}",
	"GET /customers", "POST /customers", "GET /customers/{customer_id}", "PATCH /customers/{customer_id}",
	"DELETE /customers/{customer_id}",
	"GET /tenants", "POST /tenants", "GET /tenants/{tenant_id}", "PATCH /tenants/{tenant_id}", "DELETE /tenants/{tenant_id}",
	"GET /users", "POST /users", "GET /users/{user_id}", "PATCH /users/{user_id}", "DELETE /users/{user_id}",
	"GET /projects", "POST /projects", "GET /projects/{project_id}", "PATCH /projects/{project_id}",
	"DELETE /projects/{project_id}",
	"GET /projects/{project_id}/prod-lock", "PUT /projects/{project_id}/prod-lock",
	"GET /projects/{project_id}/release-operations", "POST /projects/{project_id}/release-promotions",
	"GET /projects/{project_id}/release-state", "GET /release-operations/{release_operation_id}",
	"GET /licence", "PUT /licence",
	"GET /api-tokens", "GET /api-tokens/{token_id}", "GET /service-accounts",
	"GET /ai/models", "POST /ai/models", "GET /ai/models/{model_id}", "PATCH /ai/models/{model_id}",
	"DELETE /ai/models/{model_id}", "GET /ai/nodes", "GET /ai/nodes/{hostname}", "GET /node-caches",
	"PUT /node-caches/{hostname}/{model_id}", "DELETE /node-caches/{hostname}/{model_id}",
	"GET /ai/gateway", "GET /ai/gateway/tiers", "GET /ai/gateway/keys", "POST /ai/gateway/keys",
	"POST /ai/gateway/keys/{key_id}/rotate", "DELETE /ai/gateway/keys/{key_id}",
	"GET /audit-events", "GET /audit-events/{event_id}",
	"GET /brand", "PUT /brand", "GET /brand/assets", "POST /brand/assets", "GET /brand/assets/{asset_id}",
	"GET /brand/assets/{asset_id}/content",
}

func TestOpenAPI_ListsEveryOperationTheContractAndDesignName(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, named := range namedOperations {
		method, path, _ := strings.Cut(named, " ")
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("%s is not in the served OpenAPI document", named)
		}
	}
}

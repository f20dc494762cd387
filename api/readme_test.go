package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
)

// endpointRow is one operation row of the README's endpoint table:
// "| GET /customers/{customer_id} | `get-customer` | …".
var endpointRow = regexp.MustCompile("(?m)^\\| ([A-Z]+) (/[^ |]*) \\| `([a-z0-9-]+)` \\|")

// TestREADME_EndpointTableListsEveryOperation: the README's endpoint table
// has one row per operation of the served OpenAPI document, with its method,
// path and operation id, and no row for an operation the server lacks.
func TestREADME_EndpointTableListsEveryOperation(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(raw), "\n## Endpoints\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var readme []string
	for _, m := range endpointRow.FindAllStringSubmatch(section, -1) {
		readme = append(readme, m[3]+" "+m[1]+" "+m[2])
	}

	e := apitest.New(t, apitest.Options{})
	r := e.Do(http.MethodGet, "/api/v1/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
		t.Fatalf("openapi.json: status %d", r.Status)
	}
	var served []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.OperationID != "" {
				served = append(served, op.OperationID+" "+strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(readme)
	sort.Strings(served)
	if diff := cmp.Diff(served, readme); diff != "" {
		t.Errorf("README endpoint table vs served operations (-served +README):\n%s", diff)
	}
}

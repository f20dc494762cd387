package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
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
			if !kebab.MatchString(op.OperationID) || op.Summary == "" || len(op.Security) == 0 || op.Permissions == nil {
				t.Errorf("%s %s: id %q summary %q security %v", method, path, op.OperationID, op.Summary, op.Security)
			}
			for _, code := range []string{"401", "403", "429", "503", "default"} {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s %s: no %s response", method, path, code)
				}
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

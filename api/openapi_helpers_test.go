package api_test

import (
	"encoding/json"
	"testing"

	"platformapi/api/apitest"
)

// servedDescription is the description of the operation at method and
// path (as the OpenAPI document spells them) in the document e serves.
func servedDescription(t *testing.T, e *apitest.Env, method, path string) string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Description string `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Paths[path][method].Description
}

package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"platformapi/api/apitest"
)

// TestOpenAPI_EveryComponentSchemaIsReferenced: the served document holds
// no schema that no operation reaches (Redocly's no-unused-components), and
// every reference names a schema it holds.
func TestOpenAPI_EveryComponentSchemaIsReferenced(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	r := e.Do(http.MethodGet, "/api/v1/openapi.json", "", nil)
	var doc map[string]any
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
		t.Fatalf("openapi.json: status %d", r.Status)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	delete(doc["components"].(map[string]any), "schemas")
	ref := regexp.MustCompile(`"#/components/schemas/([^"]+)"`)
	refsOf := func(v any) []string {
		raw, _ := json.Marshal(v)
		var names []string
		for _, m := range ref.FindAllSubmatch(raw, -1) {
			names = append(names, string(m[1]))
		}
		return names
	}
	reached := map[string]bool{}
	for queue := refsOf(doc); len(queue) > 0; queue = queue[1:] {
		name := queue[0]
		if reached[name] {
			continue
		}
		s, ok := schemas[name]
		if !ok {
			t.Errorf("a reference names schema %s, which the document lacks", name)
			continue
		}
		reached[name] = true
		queue = append(queue, refsOf(s)...)
	}
	for name := range schemas {
		if !reached[name] {
			t.Errorf("schema %s is not referenced from any operation", name)
		}
	}
}

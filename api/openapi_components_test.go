package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"platformapi/api/apitest"
	"platformapi/api/schemawalk"
	"platformapi/resources"
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
	reached, missing := schemawalk.Reachable(doc, schemas)
	for _, name := range missing {
		t.Errorf("a reference names schema %s, which the document lacks", name)
	}
	for name := range schemas {
		if !reached[name] {
			t.Errorf("schema %s is not referenced from any operation", name)
		}
	}
}

// TestOpenAPI_EveryOperationDeclaresMalformedQuery400: any operation answers
// 400 invalid_parameter to a query string with a bad percent-encoding, so
// every operation declares 400 (it is answered before the operation runs).
func TestOpenAPI_EveryOperationDeclaresMalformedQuery400(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	r := e.Do(http.MethodGet, "/api/v1/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
		t.Fatalf("openapi.json: status %d", r.Status)
	}
	for _, ops := range doc.Paths {
		for _, op := range ops {
			if _, ok := op.Responses["400"]; !ok {
				t.Errorf("%s declares no 400", op.OperationID)
			}
		}
	}
	tok := e.Token(resources.PermAuditRead)
	for _, path := range []string{"/api/v1/whoami", "/api/v1/meta", "/api/v1/problems"} {
		r := e.Do(http.MethodGet, path+"?a=%zz", tok, nil)
		if r.Status != http.StatusBadRequest || !bytes.Contains(r.Body, []byte(`"invalid_parameter"`)) {
			t.Errorf("GET %s?a=%%zz: status %d: %s", path, r.Status, r.Body)
		}
	}
}

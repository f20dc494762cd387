package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// baseline is the committed 1.0.0 document the gate compares with in CI.
const baseline = "../../api/testdata/openapi-1.0.0.json"

// doc is a decoded OpenAPI document, mutated in memory by the cases.
type doc = map[string]any

func obj(v any, keys ...string) map[string]any {
	m := v.(map[string]any)
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

// queryParam returns the query parameter name of the operation method path.
func queryParam(t *testing.T, d doc, path, method, name string) map[string]any {
	t.Helper()
	for _, p := range obj(d, "paths", path, method)["parameters"].([]any) {
		if p := p.(map[string]any); p["in"] == "query" && p["name"] == name {
			return p
		}
	}
	t.Fatalf("no query parameter %s on %s %s", name, method, path)
	return nil
}

// longName is the long_name member of the customer create body.
func longName(d doc) map[string]any {
	return obj(d, "components", "schemas", "CustomerCreate", "properties", "long_name")
}

func loadBaseline(t *testing.T) ([]byte, doc) {
	t.Helper()
	raw, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return raw, d
}

func TestBreaking_BaselineAgainstItself_ReportsNone(t *testing.T) {
	raw, _ := loadBaseline(t)
	found, err := Breaking(raw, raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Fatalf("the baseline breaks itself:\n%s", strings.Join(found, "\n"))
	}
}

// An empty or foreign file on either side is an error, never "no change".
func TestBreaking_NotADocument_Fails(t *testing.T) {
	raw, _ := loadBaseline(t)
	noPaths := `{"openapi":"3.1.0","info":{"title":"x","version":"1"}}`
	for _, other := range []string{"", "{}", noPaths} {
		if _, err := Breaking([]byte(other), raw); err == nil {
			t.Errorf("baseline %q: no error", other)
		}
		if _, err := Breaking(raw, []byte(other)); err == nil {
			t.Errorf("current %q: no error", other)
		}
	}
}

// TestBreaking_ClientVisibleChanges_Fail mutates the baseline the way a
// careless change of the server would and wants the gate to name the check.
func TestBreaking_ClientVisibleChanges_Fail(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, d doc)
		wantID string
	}{
		{"an operation removed", func(t *testing.T, d doc) {
			delete(obj(d, "paths", "/customers"), "get")
		}, "api-removed-without-deprecation"},
		{"an optional query parameter made required", func(t *testing.T, d doc) {
			queryParam(t, d, "/customers", "get", "status")["required"] = true
		}, "request-parameter-became-required"},
		{"a request body limit tightened", func(t *testing.T, d doc) {
			longName(d)["maxLength"] = 40
		}, "request-property-max-length-decreased"},
		{"a query parameter limit tightened", func(t *testing.T, d doc) {
			obj(queryParam(t, d, "/customers", "get", "short_name"), "schema")["maxLength"] = 8
		}, "request-parameter-max-length-decreased"},
		{"a filter value removed", func(t *testing.T, d doc) {
			items := obj(queryParam(t, d, "/customers", "get", "status"), "schema", "items")
			items["enum"] = []any{"active", "suspended"}
		}, "request-parameter-property-enum-value-removed"},
		{"a required response member removed", func(t *testing.T, d doc) {
			customer := obj(d, "components", "schemas", "Customer")
			delete(obj(customer, "properties"), "notes")
			customer["required"] = without(customer["required"].([]any), "notes")
		}, "response-required-property-removed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, d := loadBaseline(t)
			tc.mutate(t, d)
			found := breakingAgainst(t, raw, d)
			if !containsID(found, tc.wantID) {
				t.Fatalf("want a breaking change %s, got:\n%s",
					tc.wantID, strings.Join(found, "\n"))
			}
		})
	}
}

// TestBreaking_AdditionsAndDocumentation_Pass: what a 1.x release may do.
func TestBreaking_AdditionsAndDocumentation_Pass(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, d doc)
	}{
		{"an x- extension added", func(t *testing.T, d doc) {
			obj(d, "paths", "/customers", "get")["x-stability"] = "stable"
		}},
		{"descriptions and an example changed", func(t *testing.T, d doc) {
			op := obj(d, "paths", "/customers", "get")
			op["description"] = "Customers, reworded."
			p := queryParam(t, d, "/customers", "get", "short_name")
			p["description"] = "Exact short name, e.g. ACME"
			p["example"] = "ACME"
		}},
		{"an optional query parameter added", func(t *testing.T, d doc) {
			op := obj(d, "paths", "/customers", "get")
			op["parameters"] = append(op["parameters"].([]any), map[string]any{
				"in": "query", "name": "long_name", "schema": map[string]any{"type": "string"},
			})
		}},
		{"an operation added", func(t *testing.T, d doc) {
			obj(d, "paths")["/customers/{customer_id}/notes-history"] = map[string]any{
				"get": map[string]any{
					"operationId": "list-customer-notes-history",
					"parameters": []any{map[string]any{
						"in": "path", "name": "customer_id", "required": true,
						"schema": map[string]any{"type": "string"},
					}},
					"responses": map[string]any{"200": map[string]any{"description": "OK"}},
				},
			}
		}},
		{"a request body limit loosened", func(t *testing.T, d doc) {
			longName(d)["maxLength"] = 120
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, d := loadBaseline(t)
			tc.mutate(t, d)
			if found := breakingAgainst(t, raw, d); len(found) != 0 {
				t.Fatalf("want no breaking change, got:\n%s", strings.Join(found, "\n"))
			}
		})
	}
}

func breakingAgainst(t *testing.T, raw []byte, mutated doc) []string {
	t.Helper()
	current, err := json.Marshal(mutated)
	if err != nil {
		t.Fatal(err)
	}
	found, err := Breaking(raw, current)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func containsID(found []string, id string) bool {
	for _, line := range found {
		if strings.HasSuffix(line, "["+id+"]") {
			return true
		}
	}
	return false
}

func without(list []any, drop string) []any {
	out := make([]any, 0, len(list))
	for _, v := range list {
		if v != drop {
			out = append(out, v)
		}
	}
	return out
}

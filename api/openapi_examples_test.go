package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// exampleDoc is the served document with a compiler over it, for checking
// the examples it carries against the schemas beside them.
type exampleDoc struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
}

func loadExampleDoc(t *testing.T) *exampleDoc {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	raw := e.Do("GET", "/api/v1/openapi.json", "", nil).Body
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // a date-time example must be one
	if err := c.AddResource("file:///openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	return &exampleDoc{doc: doc.(map[string]any), compiler: c}
}

// check validates value against the schema at pointer (a JSON pointer into
// the document).
func (d *exampleDoc) check(pointer string, value any) error {
	s, err := d.compiler.Compile("file:///openapi.json#" + pointer)
	if err != nil {
		return fmt.Errorf("compiling %s: %w", pointer, err)
	}
	return s.Validate(value)
}

func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Every JSON request body has an example (the docs page's Try-it starts
// from it), and every example in the document (request bodies, parameters,
// schema examples) is valid against its schema: Spectral's
// oas3-valid-*-example rules, and a client copying one gets no 400 or 422
// for its shape.
func TestOpenAPI_ExamplesValidateAgainstTheirSchemas(t *testing.T) {
	d := loadExampleDoc(t)
	paths := d.doc["paths"].(map[string]any)
	checked := 0
	for _, path := range slices.Sorted(mapKeys(paths)) {
		for method, raw := range paths[path].(map[string]any) {
			op := raw.(map[string]any)
			at := "/paths/" + pointerEscape(path) + "/" + method
			checked += d.checkBody(t, at, op)
			checked += d.checkParams(t, at, op)
		}
	}
	checked += d.checkSchemaExamples(t, "", d.doc)
	if checked < 100 {
		t.Fatalf("only %d examples checked: the walk misses them", checked)
	}
	t.Logf("%d examples checked", checked)
}

func (d *exampleDoc) checkBody(t *testing.T, at string, op map[string]any) int {
	body, _ := op["requestBody"].(map[string]any)
	content, _ := body["content"].(map[string]any)
	n := 0
	for ct, raw := range content {
		if !strings.HasSuffix(ct, "json") {
			continue // binary uploads (brand assets): the file is the example
		}
		mt := raw.(map[string]any)
		ex, ok := mt["example"]
		if !ok {
			t.Errorf("%s: the %s request body has no example", at, ct)
			continue
		}
		if err := d.check(at+"/requestBody/content/"+pointerEscape(ct)+"/schema", ex); err != nil {
			t.Errorf("%s %s example: %v", at, ct, err)
		}
		n++
	}
	return n
}

func (d *exampleDoc) checkParams(t *testing.T, at string, op map[string]any) int {
	params, _ := op["parameters"].([]any)
	n := 0
	for i, raw := range params {
		p := raw.(map[string]any)
		ex, ok := p["example"]
		if !ok {
			if p["in"] == "path" {
				t.Errorf("%s: path parameter %s has no example", at, p["name"])
			}
			continue
		}
		if err := d.check(fmt.Sprintf("%s/parameters/%d/schema", at, i), ex); err != nil {
			t.Errorf("%s parameter %s example %v: %v", at, p["name"], ex, err)
		}
		n++
	}
	return n
}

// checkSchemaExamples validates each schema's examples (from struct tags)
// found anywhere under node: a schema's examples is an array, where a
// media type's or parameter's is a map.
func (d *exampleDoc) checkSchemaExamples(t *testing.T, at string, node any) int {
	n := 0
	switch v := node.(type) {
	case map[string]any:
		if examples, ok := v["examples"].([]any); ok {
			for _, ex := range examples {
				if err := d.check(at, ex); err != nil {
					t.Errorf("schema %s example %v: %v", at, ex, err)
				}
				n++
			}
		}
		for k, child := range v {
			n += d.checkSchemaExamples(t, at+"/"+pointerEscape(k), child)
		}
	case []any:
		for i, child := range v {
			n += d.checkSchemaExamples(t, fmt.Sprintf("%s/%d", at, i), child)
		}
	}
	return n
}

// The broken example is caught: the check is not vacuous.
func TestOpenAPI_ExampleCheck_RefusesAWrongExample(t *testing.T) {
	d := loadExampleDoc(t)
	at := "/paths/" + pointerEscape("/customers") +
		"/post/requestBody/content/application~1json/schema"
	if err := d.check(at, map[string]any{"short_name": "acme"}); err == nil {
		t.Fatal("a customer without its required members and a lower-case short name passed")
	}
	if err := d.check("/components/schemas/GatewayKeyCreate/properties/expires_at",
		"next tuesday"); err == nil {
		t.Fatal("a date-time example that is none passed")
	}
}

// The body examples work as shown on a fresh installation: each create,
// in the order Try-it would take them, is accepted by the server (the ids
// the later ones name are the ones the earlier ones made).
func TestOpenAPI_BodyExamples_TheServerAcceptsThem(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct{ Example any }
			}
		}
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	token := e.Token(resources.PermTenancyWrite, resources.PermProjectsWrite,
		resources.PermUsersWrite, resources.PermAIWrite, resources.PermAIGatewayKeys)
	for _, path := range []string{"/customers", "/tenants", "/projects", "/users", "/ai/models",
		"/ai/gateway/keys"} {
		ex := doc.Paths[path]["post"].RequestBody.Content["application/json"].Example
		r := e.Do("POST", "/api/v1"+path, token, ex)
		if r.Status/100 != 2 {
			t.Errorf("POST %s with its example: %d %s", path, r.Status, r.Body)
		}
	}
	patch := doc.Paths["/customers/{customer_id}"]["patch"]
	ex := patch.RequestBody.Content["application/json"].Example
	if r := e.Do("PATCH", "/api/v1/customers/1", token, ex); r.Status != 200 {
		t.Errorf("PATCH /customers/1 with its example: %d %s", r.Status, r.Body)
	}
}

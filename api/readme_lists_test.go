package api_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docParam is a parameter of the snapshot's operations.
type docParam struct {
	Name string `json:"name"`
}

// docGet is a GET operation of the snapshot: its parameters and the schema
// of its 200 JSON answer.
type docGet struct {
	Parameters []docParam `json:"parameters"`
	Responses  map[string]struct {
		Content map[string]struct {
			Schema struct {
				Ref string `json:"$ref"`
			} `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// unpagedLists are the paths of the lists (answers with items and
// next_cursor) in the OpenAPI snapshot that take no `limit`, and those that
// take no `fields`, sorted.
func unpagedLists(t *testing.T) (noLimit, noFields []string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]struct{ Get *docGet } `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		if item.Get == nil {
			continue
		}
		ref := item.Get.Responses["200"].Content["application/json"].Schema.Ref
		props := doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")].Properties
		if props["items"] == nil || props["next_cursor"] == nil {
			continue
		}
		has := func(name string) bool {
			return slices.ContainsFunc(item.Get.Parameters, func(p docParam) bool { return p.Name == name })
		}
		if !has("limit") {
			noLimit = append(noLimit, path)
		}
		if !has("fields") {
			noFields = append(noFields, path)
		}
	}
	slices.Sort(noLimit)
	slices.Sort(noFields)
	return noLimit, noFields
}

// codePaths are the backquoted paths of s, sorted.
func codePaths(s string) []string {
	var paths []string
	for _, m := range regexp.MustCompile("`(/[^`]*)`").FindAllStringSubmatch(s, -1) {
		paths = append(paths, m[1])
	}
	slices.Sort(paths)
	return paths
}

// TestREADME_Lists_NamesTheListsWithoutLimitOrFields: the README's
// paragraph on lists names exactly the lists that take no `limit` and
// those that take no `fields` (it said every list took both, and
// GET /permissions?limit=5 and GET /problems?fields=code answer 400).
func TestREADME_Lists_NamesTheListsWithoutLimitOrFields(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	noLimit, noFields := unpagedLists(t)
	m := regexp.MustCompile("(?s)\nLists: `limit`.*?; the catalogues (.*?)\\s+take\\s+neither.*?" +
		"Every list but (.*?)\\s+also\\s+takes\\s+`fields`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README's paragraph on lists does not name the lists without limit and fields")
	}
	if diff := cmp.Diff(noLimit, codePaths(string(m[1]))); diff != "" {
		t.Errorf("lists without limit (-snapshot +README):\n%s", diff)
	}
	if diff := cmp.Diff(noFields, codePaths(string(m[2]))); diff != "" {
		t.Errorf("lists without fields (-snapshot +README):\n%s", diff)
	}
}

package api_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"platformapi/api/apitest"
)

// enumDoc is the part of the OpenAPI document TestOpenAPI_MemberDescription…
// reads: list operations' enum filters and the members of their items.
type enumDoc struct {
	Paths map[string]map[string]struct {
		OperationID string `json:"operationId"`
		Parameters  []struct {
			Name   string `json:"name"`
			In     string `json:"in"`
			Schema struct {
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"schema"`
		} `json:"parameters"`
		Responses map[string]struct {
			Content map[string]struct {
				Schema enumSchema `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]enumSchema `json:"schemas"`
	} `json:"components"`
}

// enumSchema is what the test reads of a schema.
type enumSchema struct {
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
	Enum        []any                 `json:"enum"`
	Items       *enumSchema           `json:"items"`
	Properties  map[string]enumSchema `json:"properties"`
}

// resolve follows s's $ref, if any.
func (d enumDoc) resolve(s enumSchema) enumSchema {
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		return d.Components.Schemas[name]
	}
	return s
}

// A member whose description lists its values (an open set: "pending,
// running, …"; a closed one has its enum) names every value the list's filter of the same name takes:
// an agent reads the member's description in tools/list and filters by what
// it read. Operation.kind left out data_copy, which list-operations?kind=
// takes and answers.
func TestOpenAPI_MemberDescriptionListingValues_ListsEveryValueItsFilterTakes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	var doc enumDoc
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		op := ops["get"]
		page := doc.resolve(op.Responses["200"].Content["application/json"].Schema)
		items := page.Properties["items"].Items
		if items == nil {
			continue
		}
		item := doc.resolve(*items)
		for _, p := range op.Parameters {
			member := item.Properties[p.Name]
			if member.Enum != nil { // the schema lists them
				continue
			}
			desc := member.Description
			var missing []string
			for _, v := range p.Schema.Items.Enum {
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(desc) {
					missing = append(missing, v)
				}
			}
			if p.In == "query" && len(missing) > 0 && len(missing) < len(p.Schema.Items.Enum) {
				t.Errorf("%s %s: member %s is described %q, without %v", op.OperationID, path, p.Name,
					desc, missing)
			}
		}
	}
}

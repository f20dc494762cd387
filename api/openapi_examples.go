package api

import (
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// bearerDescription describes the bearer scheme with a token of the real
// shape; the docs page follows it with its generic "Bearer 123".
const bearerDescription = "An API token, sent as `Authorization: Bearer <token>`: `svc_pat_` " +
	"(a person's) or `svc_sat_` (a service account's), 32 random and 6 checksum characters, " +
	"e.g. `Authorization: Bearer svc_pat_aDgbwwuxPDyOYlb8UTdh7tbcpffoQFwx33ar0u`."

// bodyExamples is a realistic request body for each operation that takes a
// JSON body, shown by the docs page's Try-it instead of "string"
// placeholders. TestOpenAPI_ExamplesValidateAgainstTheirSchemas validates
// each against its schema and wants one for every JSON body.
var bodyExamples = map[string]any{
	"create-customer": map[string]any{
		"short_name": "ACME", "long_name": "Acme Corporation", "vcs_group": "acme",
		"primary_contact_email": "jane.doe@acme.example", "primary_contact_name": "Jane Doe",
		"billing_tier": "PAYING", "edition": "enterprise",
	},
	"patch-customer": map[string]any{"long_name": "Acme Corporation Europe", "notes": nil},
	"create-tenant": map[string]any{
		"customer_id": "1", "slug": "acme-research", "name": "Acme Research",
	},
	"patch-tenant": map[string]any{"name": "Acme Research and Development"},
	"create-project": map[string]any{
		"customer_id": "1", "short_name": "SHOP", "name": "Web shop", "kind": "cluster",
		"components": []any{"app-api", "www"}, "domain": "shop.acme.example",
	},
	"patch-project": map[string]any{"name": "Web shop (EU)", "domain": "eu.shop.acme.example"},
	"set-prod-lock": map[string]any{"locked": false, "confirm_unlock": "SHOP"},
	"request-release-promotion": map[string]any{
		"component": "app-api", "target_env": "dev", "version": "2.4.1",
	},
	"invite-user": map[string]any{
		"email": "dana.fischer@acme.example", "display_name": "Dana Fischer",
	},
	"patch-user": map[string]any{"display_name": "Dana Fischer-Lang"},
	"create-ai-model": map[string]any{
		"repo": "Qwen/Qwen3-Coder-30B-A3B-Instruct", "category": "coding", "vendor": "Alibaba Qwen",
		"org": "Qwen", "gateway_tier": "coding", "param_count_b": 30.5, "size_gb": 61.0,
		"serving_node": "gpu-fra1-01", "license": "apache-2.0",
		"summary": "Coding assistant for the developer portal.",
	},
	"patch-ai-model": map[string]any{
		"summary": "Coding assistant for the developer portal and CI reviews.", "gated": false,
	},
	"create-ai-gateway-key": map[string]any{
		"name": "ci-runner", "tier": "coding", "expires_at": "2027-03-31T00:00:00Z",
		"return_value": true,
	},
	"rotate-ai-gateway-key": map[string]any{"return_value": true},
	"replace-brand": map[string]any{
		"brand_color": "#2563EB", "logo_asset_id": "1", "favicon_asset_id": "2",
	},
	"install-licence": map[string]any{
		"bundle": "eyJpbnN0YWxsYXRpb24iOiJhY21lLXByb2QiLCJzZWF0cyI6NTB9." +
			"5Q0m2x9zF1k3VYp8cR7tLw4HnB6sJd0aEuKgXo2iMhT9vNqZ1bC3yW8eA5rUf7lGkPjD4sOtYxIcQ6mHa0VBw",
	},
}

// paramExamples is an example for each path, query and header parameter by
// where it is and its name, where a value helps: ids, instants, exact-match
// filters. Enums, booleans and parameters with a default need none (the docs
// page offers their values), nor cursor (opaque). The examples go on the
// parameter, never its schema: tool schemas derive from the schema and the
// tools/list budget leaves no room for examples.
var paramExamples = map[string]any{
	"path customer_id": "1", "path tenant_id": "1", "path project_id": "1", "path user_id": "2",
	"path token_id": "3", "path key_id": "4", "path model_id": "3", "path asset_id": "1",
	"path event_id": "120", "path operation_id": "15", "path release_operation_id": "7",
	"path hostname": "gpu-fra1-01",

	"query customer_id": "1", "query tenant_id": "1", "query project_id": "1", "query user_id": "2",
	"query service_account_id": "5", "query model_id": "3", "query hostname": "gpu-fra1-01",
	"query short_name": "ACME", "query vcs_group": "acme", "query slug": "acme-research",
	"query email": "jane.doe@acme.example", "query role": "admin",
	"query actor": "jane.doe@acme.example", "query action": "customer.create",
	"query entity_type": "customer", "query entity_id": "1", "query target_id": "1",
	"query since": "2026-11-01T00:00:00Z", "query until": "2026-12-01T00:00:00Z",
	"query expires_before": "2026-12-31T00:00:00Z",
	"query category":       "coding", "query vendor": "Meta", "query org": "meta-llama",
	"query gateway_tier": "chat", "query serving_node": "gpu-fra1-02", "query q": "coder",
	"query site": "fra1", "query gpu_class": "H100",
	"query model": "meta-llama/Llama-3.3-70B-Instruct",

	"header " + IdempotencyKeyHeader: "3f0c9b2e-7d41-4a8e-b6f5-2c9d8e1a4b70",
	"header If-Match":                `"3"`,
	"header If-None-Match":           `"3"`,
}

// addExamples puts bodyExamples on the JSON media types of each operation's
// request body, paramExamples on its parameters, and on a list's fields
// parameter its item key and next required members.
func addExamples(oapi *huma.OpenAPI) {
	for op := range Operations(oapi) {
		if ex, ok := bodyExamples[op.OperationID]; ok && op.RequestBody != nil {
			for ct, mt := range op.RequestBody.Content {
				if strings.HasSuffix(ct, "json") {
					mt.Example = ex
				}
			}
		}
		for _, p := range op.Parameters {
			if ex, ok := paramExamples[p.In+" "+p.Name]; ok && p.Example == nil {
				p.Example = ex
			}
			if p.In == "query" && p.Name == "fields" {
				p.Example = fieldsExample(oapi, op.Operation)
			}
		}
	}
}

// fieldsExample names the members a list always keeps (x-item-key) and the
// next required members of its item, comma-separated: "id,short_name,status".
func fieldsExample(oapi *huma.OpenAPI, op *huma.Operation) any {
	names, _ := op.Extensions[ExtItemKey].([]string)
	item := listItemSchema(oapi, op)
	for _, name := range item.Required {
		if len(names) >= 3 {
			break
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return strings.Join(names, ",")
}

// listItemSchema is the schema of the items of op's 200 answer, or an empty
// schema when op's answer is not a page of component items.
func listItemSchema(oapi *huma.OpenAPI, op *huma.Operation) *huma.Schema {
	empty, schemas := &huma.Schema{}, oapi.Components.Schemas
	ok := op.Responses["200"]
	if ok == nil || ok.Content["application/json"] == nil {
		return empty
	}
	answer := ok.Content["application/json"].Schema
	if answer == nil {
		return empty
	}
	page := schemas.SchemaFromRef(answer.Ref)
	if page == nil || page.Properties["items"] == nil || page.Properties["items"].Items == nil {
		return empty
	}
	if item := schemas.SchemaFromRef(page.Properties["items"].Items.Ref); item != nil {
		return item
	}
	return empty
}

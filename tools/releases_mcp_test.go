package tools

import (
	"context"
	"net/http"
	"testing"

	"platformapi/api"
	"platformapi/resources"
)

// TestMCP_ReleaseStateSameAsREST: an agent asking "what runs where" over MCP
// gets exactly the REST answer, deployments and PROD lock included.
func TestMCP_ReleaseStateSameAsREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	ctx := context.Background()
	c, err := e.api.Store.CreateCustomer(ctx, resources.Actor{Label: "test"}, resources.CustomerCreate{Customer: resources.Customer{
		ShortName: "ACME", LongName: "Acme Corp", VCSGroup: "acme", PrimaryContactEmail: "a@acme.example",
		PrimaryContactName: "Jane", BillingTier: "INTERNAL", DefaultEmailTier: 3, Edition: "sp", Status: "active"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Store.CreateProject(ctx, resources.Actor{Label: "test"}, resources.Project{CustomerID: c.ID,
		ShortName: "SHOP", Name: "Web shop", Kind: "cluster", Components: []string{"www"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Store.SetProdLock(ctx, resources.Actor{Label: "test"}, 1, true, nil); err != nil {
		t.Fatal(err)
	}
	tok := e.token(resources.PermReleasesRead)
	rest := e.do(http.MethodGet, api.Prefix+"/projects/1/release-state", map[string]string{"Authorization": "Bearer " + tok}, "")
	if rest.status != http.StatusOK {
		t.Fatalf("REST: %d %s", rest.status, rest.body)
	}
	res := call(t, e.client(tok, nil, false), "get-release-state", map[string]any{"project_id": "1"})
	if res.IsError || resultText(t, res) != string(rest.body) {
		t.Fatalf("MCP %q, REST %q", resultText(t, res), rest.body)
	}
	if lock := res.StructuredContent.(map[string]any)["prod_lock"].(map[string]any); lock["locked"] != true {
		t.Fatalf("prod lock over MCP: %v", lock)
	}
}

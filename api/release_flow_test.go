package api_test

import (
	"context"
	"sync"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func releaseEnv(t *testing.T) (*apitest.Env, string) {
	e := apitest.New(t, apitest.Options{})
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "release", AllowDestroy: true, Scopes: []string{
		resources.PermTenancyWrite, resources.PermProjectsWrite, resources.PermProjectsRead,
		resources.PermReleasesWrite, resources.PermReleasesRead, resources.PermAuditRead}})
}

func promote(t *testing.T, e *apitest.Env, tok, project string, body map[string]any, headers ...string) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/v1/projects/"+project+"/release-promotions", tok, body, headers...)
	if r.Status != 202 || r.Header.Get("Location") != "/api/v1/operations/"+r.JSON(t)["id"].(string) {
		t.Fatalf("promotion: %d %v %s", r.Status, r.Header, r.Body)
	}
	return r.JSON(t)
}

// shopProject creates a customer and a provisioned cluster project.
func shopProject(t *testing.T, e *apitest.Env, tok string) string {
	t.Helper()
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	r := e.Do("POST", "/api/v1/projects", tok, map[string]any{"customer_id": cid, "short_name": "SHOP", "name": "Web shop",
		"kind": "cluster", "components": []string{"app-api", "www"}})
	if r.Status != 202 {
		t.Fatalf("project: %d %s\n%s", r.Status, r.Body, e.LogText())
	}
	op := apitest.PollOperation(t, e, tok, r.JSON(t)["id"].(string), "succeeded")
	return op["target"].(map[string]any)["id"].(string)
}

func TestReleases_WholePath_DevUATProdApprovedAndStateShowsAllThree(t *testing.T) {
	e, tok := releaseEnv(t)
	pid := shopProject(t, e, tok)
	if p := e.Do("GET", "/api/v1/projects/"+pid, tok, nil).JSON(t); p["status"] != "active" {
		t.Fatalf("project after provisioning: %v", p)
	}
	dev := promote(t, e, tok, pid, map[string]any{"component": "app-api", "target_env": "dev", "version": "1.4.0"})
	apitest.PollOperation(t, e, tok, dev["id"].(string), "succeeded")
	uat := promote(t, e, tok, pid, map[string]any{"component": "app-api", "target_env": "uat"})
	if done := apitest.PollOperation(t, e, tok, uat["id"].(string), "succeeded"); done["result"].(map[string]any)["version"] != "1.4.0" {
		t.Fatalf("uat took %v", done["result"])
	}
	prod := promote(t, e, tok, pid, map[string]any{"component": "app-api", "target_env": "prod", "version": "1.4.0"})
	if prod["status"] != "awaiting_approval" {
		t.Fatalf("prod: %v", prod)
	}
	id, _ := resources.ReleaseOperationID(prod["id"].(string))
	ctx := context.Background()
	if _, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: apitest.AdminEmail}, id, ""); err == nil {
		t.Fatal("the requester (token owner and minter) approved without a note")
	}
	if r, err := e.Store.ApproveRelease(ctx, resources.Actor{Label: apitest.AdminEmail}, id, "hotfix verified in uat"); err != nil || r.Status != "pending" {
		t.Fatalf("approval with a note: %v %v", r, err)
	}
	apitest.PollOperation(t, e, tok, prod["id"].(string), "succeeded")
	st := e.Do("GET", "/api/v1/projects/"+pid+"/release-state", tok, nil).JSON(t)
	envs := st["environments"].(map[string]any)
	for _, env := range []string{"dev", "uat", "prod"} {
		d := envs[env].(map[string]any)["app-api"].(map[string]any)
		if d["version"] != "1.4.0" || d["reported_by"] == nil || d["reported_at"] == nil {
			t.Fatalf("%s: %v", env, d)
		}
		if envs[env].(map[string]any)["www"] != nil {
			t.Fatalf("%s www must be null: %v", env, envs[env])
		}
	}
	if len(st["open_operations"].([]any)) != 0 || st["prod_lock"].(map[string]any)["locked"] != false {
		t.Fatalf("state: %v", st)
	}
	rel := e.Do("GET", "/api/v1/release-operations/"+formatInt(id), tok, nil).JSON(t)
	if rel["decision"].(map[string]any)["note"] != "hotfix verified in uat" || rel["operation_id"] != prod["id"] {
		t.Fatalf("release operation: %v", rel)
	}
}

func TestReleases_IdempotentPromotionRetries_NeverBookASecondDeployment(t *testing.T) {
	e, tok := releaseEnv(t)
	pid := shopProject(t, e, tok)
	body := map[string]any{"component": "www", "target_env": "dev", "version": "2.0.1"}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			r := e.Do("POST", "/api/v1/projects/"+pid+"/release-promotions", tok, body, "Idempotency-Key", "deploy-2.0.1")
			if r.Status != 202 && r.Status != 429 {
				t.Errorf("racing retry: %d %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	first := promote(t, e, tok, pid, body, "Idempotency-Key", "deploy-2.0.1")
	again := promote(t, e, tok, pid, body, "Idempotency-Key", "deploy-2.0.1")
	if first["id"] != again["id"] {
		t.Fatalf("retries answered different operations: %v %v", first["id"], again["id"])
	}
	apitest.PollOperation(t, e, tok, first["id"].(string), "succeeded")
	e.Pipeline.Wait()
	if n := count(t, e, "SELECT count(*) FROM release_operations"); n != 1 {
		t.Fatalf("release operations booked: %d", n)
	}
	if runs := e.Pipeline.Runs(); len(runs) != 1 {
		t.Fatalf("pipeline runs: %d", len(runs))
	}
}

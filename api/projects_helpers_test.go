package api_test

import (
	"context"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// projectEnv starts an Env and mints an administrator token holding every
// scope the project and release tests use, with Allow destroy.
func projectEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "p", AllowDestroy: true, Scopes: []string{
		resources.PermTenancyRead, resources.PermTenancyWrite, resources.PermProjectsRead, resources.PermProjectsWrite,
		resources.PermReleasesRead, resources.PermReleasesWrite, resources.PermAuditRead}})
}

// shop is a project create body for the customer; overrides are name/value
// pairs, a nil value drops the member.
func shop(customerID string, overrides ...any) map[string]any {
	b := map[string]any{"customer_id": customerID, "short_name": "SHOP", "name": "Web shop", "kind": "cluster",
		"components": []string{"www", "app-api"}}
	for i := 0; i+1 < len(overrides); i += 2 {
		if overrides[i+1] == nil {
			delete(b, overrides[i].(string))
		} else {
			b[overrides[i].(string)] = overrides[i+1]
		}
	}
	return b
}

// createProject posts a project, checks the 202 operation answer and
// returns the new project's id and the operation.
func createProject(t *testing.T, e *apitest.Env, tok string, body map[string]any, headers ...string) (string, map[string]any) {
	t.Helper()
	r := e.Do("POST", "/api/v1/projects", tok, body, headers...)
	if r.Status != 202 {
		t.Fatalf("create project: %d %s", r.Status, r.Body)
	}
	op := r.JSON(t)
	if r.Header.Get("Location") != "/api/v1/operations/"+op["id"].(string) {
		t.Fatalf("Location %q for operation %v", r.Header.Get("Location"), op["id"])
	}
	target, _ := op["target"].(map[string]any)
	if op["kind"] != "project_provision" || target["type"] != "project" || target["id"] == nil {
		t.Fatalf("operation: %v", op)
	}
	return target["id"].(string), op
}

// activeProject creates the customer (when customerID is "") and a project
// of it, and waits until the project is active; it returns the project id
// and the customer id.
func activeProject(t *testing.T, e *apitest.Env, tok, customerID string, body map[string]any) (string, string) {
	t.Helper()
	if customerID == "" {
		customerID = createCustomer(t, e, tok, acme())["id"].(string)
	}
	if body == nil {
		body = shop(customerID)
	}
	body["customer_id"] = customerID
	pid, op := createProject(t, e, tok, body)
	apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
	return pid, customerID
}

// postPromotion posts a release promotion of the project.
func postPromotion(e *apitest.Env, tok, pid string, body map[string]any, headers ...string) *apitest.Response {
	e.T.Helper()
	return e.Do("POST", "/api/v1/projects/"+pid+"/release-promotions", tok, body, headers...)
}

// promotion is a promotion body; version "" leaves it out.
func promotion(component, env, version string) map[string]any {
	b := map[string]any{"component": component, "target_env": env}
	if version != "" {
		b["version"] = version
	}
	return b
}

// acceptedPromotion checks a 202 promotion answer and returns its operation.
func acceptedPromotion(t *testing.T, r *apitest.Response) map[string]any {
	t.Helper()
	if r.Status != 202 {
		t.Fatalf("promotion: %d %s", r.Status, r.Body)
	}
	op := r.JSON(t)
	if r.Header.Get("Location") != "/api/v1/operations/"+op["id"].(string) || op["kind"] != "release_promotion" {
		t.Fatalf("promotion answer: %v %v", r.Header, op)
	}
	return op
}

// deployed promotes a component to dev or uat and waits until the pipeline
// reported it; it returns the finished operation.
func deployed(t *testing.T, e *apitest.Env, tok, pid, component, env, version string) map[string]any {
	t.Helper()
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion(component, env, version)))
	return apitest.PollOperation(t, e, tok, op["id"].(string), "succeeded")
}

// releaseID is the numeric id of an operation "release:<id>".
func releaseID(t *testing.T, op map[string]any) int64 {
	t.Helper()
	id, ok := resources.ReleaseOperationID(op["id"].(string))
	if !ok {
		t.Fatalf("not a release operation: %v", op["id"])
	}
	return id
}

// addAdmin adds an administrator other than apitest.AdminEmail.
func addAdmin(t *testing.T, e *apitest.Env, email string) {
	t.Helper()
	if _, err := e.Portal.CreateUser(context.Background(), resources.Actor{Label: apitest.AdminEmail},
		resources.NewUser{Email: email, DisplayName: "Other Admin", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
}

// execSQL runs SQL against the test database.
func execSQL(t *testing.T, e *apitest.Env, sql string, args ...any) {
	t.Helper()
	if _, err := e.Store.DB().ExecContext(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// codeOf is the problem code of a store error ("" when none).
func codeOf(err error) string {
	if e, ok := resources.AsError(err); ok {
		return e.Code
	}
	return ""
}

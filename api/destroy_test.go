package api_test

import (
	"context"
	"net/http"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// withDestroyer adds a test-only destroy operation: the mechanism exists
// before the first real destroy (customer archive) does.
func withDestroyer(s *api.Server) {
	api.Register(s.API(), api.Op{ID: "test-destroy", Method: http.MethodDelete, Path: "/test-things/{id}",
		Summary: "Destroy", Permissions: []string{resources.PermTenancyWrite}, Destroy: true, Status: http.StatusNoContent},
		func(context.Context, *struct {
			ID string `path:"id"`
		}) (*struct{}, error) {
			return nil, nil
		})
}

func TestDestroy_TokenWithoutAllowDestroy_403DestroyNotAllowed(t *testing.T) {
	e := apitest.New(t, apitest.Options{Mount: withDestroyer})
	plain := e.Token(resources.PermTenancyWrite)
	assertProblem(t, e.Do("DELETE", "/api/v1/test-things/1", plain, nil), 403, "destroy_not_allowed")
	destroyer := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "d", Scopes: []string{resources.PermTenancyWrite}, AllowDestroy: true})
	if r := e.Do("DELETE", "/api/v1/test-things/1", destroyer, nil); r.Status != 204 {
		t.Fatalf("with Allow destroy: %d %s", r.Status, r.Body)
	}
	// The permission is checked before the destroy flag.
	noScope := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "n", Scopes: []string{resources.PermAIRead}, AllowDestroy: true})
	assertProblem(t, e.Do("DELETE", "/api/v1/test-things/1", noScope, nil), 403, "forbidden")
}

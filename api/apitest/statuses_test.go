package apitest_test

import (
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
)

// TestUndeclared_FlagsAnAnsweredStatusTheOperationDoesNotDeclare: an
// operation's undeclared status is flagged; declared statuses, "default",
// other routes and 499 are not.
func TestUndeclared_FlagsAnAnsweredStatusTheOperationDoesNotDeclare(t *testing.T) {
	problem := &huma.Response{Description: "Problem"}
	oapi := &huma.OpenAPI{Paths: map[string]*huma.PathItem{
		"/things/{id}": {Get: &huma.Operation{OperationID: "get-thing",
			Responses: map[string]*huma.Response{
				"200": {Description: "OK"}, "404": problem, "default": problem}}},
	}}
	answered := map[apitest.Answer]string{
		{Operation: "get-thing", Status: 200}: "TestA",
		{Operation: "get-thing", Status: 404}: "TestA",
		{Operation: "get-thing", Status: 409}: "TestB", // undeclared: "default" does not count
		{Operation: "get-thing", Status: 499}: "TestC", // the client hung up
		{Operation: "unmatched", Status: 404}: "TestD", // no operation
		{Operation: "mcp", Status: 418}:       "TestE",
	}
	got := apitest.Undeclared(apitest.DeclaredStatuses(oapi), answered)
	if diff := cmp.Diff([]apitest.Answer{{Operation: "get-thing", Status: 409}}, got); diff != "" {
		t.Errorf("Undeclared (-want +got):\n%s", diff)
	}
}

// TestUnanswered_ListsDeclaredStatusesNoTestAnswered: for information.
func TestUnanswered_ListsDeclaredStatusesNoTestAnswered(t *testing.T) {
	declared := apitest.Declared{"get-thing": {200: true, 404: true, 422: true},
		"list-things": {200: true}}
	answered := map[apitest.Answer]string{{Operation: "get-thing", Status: 200}: "TestA",
		{Operation: "list-things", Status: 200}: "TestA"}
	got := apitest.Unanswered(declared, answered)
	if diff := cmp.Diff([]string{"get-thing [404 422]"}, got); diff != "" {
		t.Errorf("Unanswered (-want +got):\n%s", diff)
	}
}

// TestInProcessOnly_TheResultBudget413OfEachGET: an MCP tool call runs its
// GET in-process with a result budget, and a result over it is 413
// result_too_large, a tool error that is never an HTTP answer: such a 413
// of a GET is not flagged; a GET's other undeclared statuses, and a 413
// of another method, still are.
func TestInProcessOnly_TheResultBudget413OfEachGET(t *testing.T) {
	problem := &huma.Response{Description: "Problem"}
	ok := map[string]*huma.Response{"200": {Description: "OK"}, "default": problem}
	oapi := &huma.OpenAPI{Paths: map[string]*huma.PathItem{
		"/things": {Get: &huma.Operation{OperationID: "list-things", Responses: ok},
			Post: &huma.Operation{OperationID: "create-thing", Responses: ok}},
	}}
	answered := map[apitest.Answer]string{
		{Operation: "list-things", Status: 200}:  "TestA",
		{Operation: "list-things", Status: 413}:  "TestA", // the tool's result budget
		{Operation: "list-things", Status: 409}:  "TestB",
		{Operation: "create-thing", Status: 413}: "TestC",
	}
	got := apitest.Undeclared(apitest.DeclaredStatuses(oapi), apitest.OverHTTP(oapi, answered))
	want := []apitest.Answer{{Operation: "create-thing", Status: 413}, {Operation: "list-things", Status: 409}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Undeclared (-want +got):\n%s", diff)
	}
}

package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// Test-only declarations: an old operation on its way out, and a current
// one with a deprecated member and a deprecated parameter.
type (
	OldThingInput struct {
		Flavour string `query:"flavour" deprecated:"true" doc:"Ignored; removed with the operation"`
	}
	OldThing struct {
		Name    string `json:"name"`
		Colour  string `json:"colour" deprecated:"true" doc:"Use name"`
		Current bool   `json:"current"`
	}
	OldThingOutput struct{ Body OldThing }
)

var deprecation = api.Deprecation{
	Since:  time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	Sunset: time.Date(2027, 11, 30, 0, 0, 0, 0, time.UTC),
	Link:   "https://example.invalid/changelog#old-thing",
}

func mountOldThings(srv *api.Server) {
	h := func(context.Context, *OldThingInput) (*OldThingOutput, error) {
		return &OldThingOutput{Body: OldThing{Name: "x", Colour: "red"}}, nil
	}
	api.Register(srv.API(), api.Op{ID: "get-old-thing", Method: http.MethodGet, Path: "/old-thing",
		Summary: "Read the old thing", Permissions: []string{resources.PermAuditRead}, Deprecated: &deprecation}, h)
	api.Register(srv.API(), api.Op{ID: "get-new-thing", Method: http.MethodGet, Path: "/new-thing",
		Summary: "Read the new thing", Permissions: []string{resources.PermAuditRead}}, h)
}

func TestDeprecation_DeclaredOperation_HeadersOnEveryAnswer(t *testing.T) {
	e := apitest.New(t, apitest.Options{Mount: mountOldThings})
	want := map[string]string{"Deprecation": "@1793491200", "Sunset": "Tue, 30 Nov 2027 00:00:00 GMT",
		"Link": `<https://example.invalid/changelog#old-thing>; rel="deprecation"; type="text/html"`}
	for name, tc := range map[string]struct {
		token  string
		status int
	}{
		"success":   {e.Token(resources.PermAuditRead), 200},
		"forbidden": {e.Token(resources.PermAIRead), 403},
		"no token":  {"", 401},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.Do("GET", "/api/v1/old-thing", tc.token, nil)
			got := map[string]string{}
			for k := range want {
				got[k] = r.Header.Get(k)
			}
			if diff := cmp.Diff(want, got); r.Status != tc.status || diff != "" {
				t.Fatalf("status %d, headers (-want +got):\n%s", r.Status, diff)
			}
		})
	}
	r := e.Do("GET", "/api/v1/new-thing", e.Token(resources.PermAuditRead), nil)
	if r.Status != 200 || r.Header.Get("Deprecation") != "" || r.Header.Get("Sunset") != "" {
		t.Fatalf("an operation not deprecated: %d %v", r.Status, r.Header)
	}
}

func TestDeprecation_DeclaredOperationAndMembers_DeprecatedInOpenAPI(t *testing.T) {
	e := apitest.New(t, apitest.Options{Mount: mountOldThings})
	type param struct {
		Name       string `json:"name"`
		Deprecated bool   `json:"deprecated"`
	}
	type operation struct {
		Deprecated bool    `json:"deprecated"`
		Sunset     string  `json:"x-sunset"`
		Parameters []param `json:"parameters"`
	}
	var doc struct {
		Paths      map[string]map[string]operation `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Deprecated bool `json:"deprecated"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]operation{"old": doc.Paths["/old-thing"]["get"], "new": doc.Paths["/new-thing"]["get"]}
	want := map[string]operation{
		"old": {Deprecated: true, Sunset: "2027-11-30T00:00:00Z", Parameters: []param{{"flavour", true}}},
		"new": {Parameters: []param{{"flavour", true}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("operations (-want +got):\n%s", diff)
	}
	props := doc.Components.Schemas["OldThing"].Properties
	if !props["colour"].Deprecated || props["name"].Deprecated {
		t.Fatalf("members: %+v", props)
	}
}

func TestDeprecation_LessThan12MonthsNotice_RefusedAtRegistration(t *testing.T) {
	short := api.Deprecation{Since: deprecation.Since, Sunset: deprecation.Since.AddDate(0, 11, 0)}
	defer func() {
		if recover() == nil {
			t.Fatal("a deprecation with 11 months' notice was registered")
		}
	}()
	apitest.New(t, apitest.Options{Mount: func(srv *api.Server) {
		api.Register(srv.API(), api.Op{ID: "get-short-thing", Method: http.MethodGet, Path: "/short-thing",
			Summary: "Short", Deprecated: &short}, func(context.Context, *struct{}) (*OldThingOutput, error) { return nil, nil })
	}})
}

package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"platformapi/api"
	"platformapi/api/apitest"
)

// TestOpenAPI_EveryParameterDescribed_EnumsListTheirValues: people and
// agents read every parameter's rule in its description.
func TestOpenAPI_EveryParameterDescribed_EnumsListTheirValues(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{Disabled: true})
	for hop := range api.Operations(e.Server.API().OpenAPI()) {
		for _, p := range hop.Parameters {
			where := fmt.Sprintf("%s %s %s %s", hop.Method, hop.Path, p.In, p.Name)
			if strings.TrimSpace(p.Description) == "" {
				t.Errorf("%s: no description", where)
			}
			if p.Schema == nil {
				continue
			}
			for _, v := range p.Schema.Enum {
				if !strings.Contains(p.Description, fmt.Sprint(v)) {
					t.Errorf("%s: the description does not list %v", where, v)
				}
			}
		}
		if hop.Method == "GET" && hop.Extensions[api.ExtToolset] == nil {
			t.Errorf("%s %s: no toolset", hop.Method, hop.Path)
		}
		if ts, ok := hop.Extensions[api.ExtToolset].(string); ok && !slices.Contains(api.Toolsets(), ts) {
			t.Errorf("%s %s: unknown toolset %s", hop.Method, hop.Path, ts)
		}
	}
}

package api_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// notFilters are enum query parameters that choose how a list answers
// rather than which rows: they take one value.
var notFilters = []string{"sort", "order", "include"}

// enumFilter is one multi-value filter of a GET operation.
type enumFilter struct {
	path, name string
	values     []string
}

// enumFilters are the enum filters of every GET operation; it fails for an
// enum filter that takes a single value.
func enumFilters(t *testing.T, e *apitest.Env) []enumFilter {
	t.Helper()
	var out []enumFilter
	for path, item := range e.Server.API().OpenAPI().Paths {
		if item.Get == nil {
			continue
		}
		for _, p := range item.Get.Parameters {
			if p.In != "query" || p.Schema == nil || p.Required || slices.Contains(notFilters, p.Name) {
				continue
			}
			if len(p.Schema.Enum) > 0 {
				t.Errorf("GET %s: enum filter %s takes one value; make it []string (comma-separated)", path, p.Name)
			}
			if p.Schema.Type == "array" && p.Schema.MaxItems == nil {
				t.Errorf("GET %s: array parameter %s has no maxItems", path, p.Name)
			}
			if p.Schema.Type == "array" && p.Schema.Items != nil && len(p.Schema.Items.Enum) > 0 {
				out = append(out, enumFilter{path, p.Name, enumStrings(p.Schema.Items)})
			}
		}
	}
	return out
}

func enumStrings(s *huma.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// TestListFilters_EveryEnumFilterTakesCommaSeparatedValues: every enum
// filter of every list takes several values comma-separated; an unknown
// value is a 400 naming the filter and listing the valid values; an empty
// value, an empty item or the filter given twice is a 400 naming it.
func TestListFilters_EveryEnumFilterTakesCommaSeparatedValues(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var scopes []string
	for _, p := range resources.Permissions() {
		if p.TokenAllowed {
			scopes = append(scopes, p.Key)
		}
	}
	tok := e.Token(scopes...)
	filters := enumFilters(t, e)
	if len(filters) < 10 {
		t.Fatalf("only %d multi-value enum filters found", len(filters))
	}
	pathParam := regexp.MustCompile(`\{[a-z_]+\}`)
	for _, f := range filters {
		t.Run(f.path+"?"+f.name, func(t *testing.T) {
			path := "/api/v1" + pathParam.ReplaceAllString(f.path, "1")
			get := func(query string) *apitest.Response { return e.Do("GET", path+"?"+query, tok, nil) }
			two := f.name + "=" + url.QueryEscape(strings.Join(f.values[:min(2, len(f.values))], ","))
			if r := get(two); r.Status == 400 || r.Status >= 500 {
				t.Fatalf("%s: %d %s", two, r.Status, r.Body)
			}
			p := assertProblem(t, get(f.name+"="+f.values[0]+",bogus"), 400, "invalid_parameter")
			if p["field"] != f.name || !containsEvery(fmt.Sprint(p["detail"]), f.values) {
				t.Errorf("unknown value: field %v, want %s, listing %v: %v", p["field"], f.name, f.values, p)
			}
			tooMany := strings.Repeat(f.values[0]+",", len(f.values)) + f.values[0]
			for _, bad := range []string{f.name + "=", f.name + "=" + f.values[0] + ",", f.name + "=" + tooMany,
				f.name + "=" + f.values[0] + "&" + f.name + "=" + f.values[0]} {
				if p := assertProblem(t, get(bad), 400, "invalid_parameter"); p["field"] != f.name {
					t.Errorf("%s: field %v", bad, p["field"])
				}
			}
		})
	}
}

func containsEvery(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestListFilters_SeveralValuesKeepRowsOfAnyOfThem: status=a,b keeps the
// rows of either status (stored and derived statuses alike).
func TestListFilters_SeveralValuesKeepRowsOfAnyOfThem(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead, resources.PermTenancyWrite, resources.PermAPITokensRead)
	active := createCustomer(t, e, tok, acme())["id"].(string)
	suspended := createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta",
		"status", "suspended"))["id"].(string)
	e.Token(resources.PermAIRead) // token 2, revoked below
	if _, err := e.Portal.RevokeToken(t.Context(), resources.Actor{Label: apitest.AdminEmail}, 2); err != nil {
		t.Fatal(err)
	}
	ids := func(path string) []string {
		var out []string
		for _, it := range e.Do("GET", path, tok, nil).JSON(t)["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/api/v1/customers?status=active,suspended", []string{active, suspended}},
		{"/api/v1/customers?status=suspended,archived", []string{suspended}},
		{"/api/v1/customers?status=archived", nil},
		{"/api/v1/api-tokens?status=active,revoked", []string{"1", "2"}},
		{"/api/v1/api-tokens?status=expired,revoked", []string{"2"}},
	} {
		if diff := cmp.Diff(tc.want, ids(tc.path)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
}

// TestListFilters_AINodeLiveStatuses_AnyOfThem: the live status filter of
// AI nodes (an open set, checked by pattern) takes several values too.
func TestListFilters_AINodeLiveStatuses_AnyOfThem(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermAIRead)
	db := e.Store.DB()
	for _, h := range []string{"gpu-a", "gpu-b", "gpu-c"} {
		if _, err := db.ExecContext(t.Context(), "INSERT INTO ai_nodes (hostname, site, gpu_class) VALUES (?, 'fra1', 'H100')", h); err != nil {
			t.Fatal(err)
		}
	}
	for h, st := range map[string]string{"gpu-a": "offline", "gpu-b": "standby", "gpu-c": "serving"} {
		e.Monitor.Set(h, resources.NodeLive{Status: &st})
	}
	hosts := func(query string) []string {
		var out []string
		for _, it := range e.Do("GET", "/api/v1/ai/nodes"+query, tok, nil).JSON(t)["items"].([]any) {
			out = append(out, it.(map[string]any)["hostname"].(string))
		}
		return out
	}
	if diff := cmp.Diff([]string{"gpu-a", "gpu-b"}, hosts("?status=offline,standby")); diff != "" {
		t.Errorf("status=offline,standby (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"?status=offline,", "?status=Offline", "?status=offline&status=standby"} {
		if p := assertProblem(t, e.Do("GET", "/api/v1/ai/nodes"+bad, tok, nil), 400, "invalid_parameter"); p["field"] != "status" {
			t.Errorf("%s: field %v", bad, p["field"])
		}
	}
}

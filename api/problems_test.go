package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestProblems_PublicCatalogueOfEveryCode: GET /problems needs no token
// and lists the one catalogue (resources.Problems) with status, meaning,
// retry and the tool to call next; a token is not charged for it.
func TestProblems_PublicCatalogueOfEveryCode(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	r := e.Do(http.MethodGet, "/api/v1/problems", "", nil)
	if r.Status != http.StatusOK || r.Header.Get("RateLimit-Limit") != "" {
		t.Fatalf("status %d, rate headers %q: %s", r.Status, r.Header.Get("RateLimit-Limit"), r.Body)
	}
	var page struct {
		Items      []api.ProblemCodeItem `json:"items"`
		NextCursor *string               `json:"next_cursor"`
	}
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.ProblemCatalogue(), page.Items); diff != "" || page.NextCursor != nil {
		t.Fatalf("(-catalogue +served)\n%s", diff)
	}
	if len(page.Items) != len(resources.Problems()) {
		t.Fatalf("%d items, catalogue holds %d", len(page.Items), len(resources.Problems()))
	}
	byCode := map[string]api.ProblemCodeItem{}
	for _, it := range page.Items {
		byCode[it.Code] = it
	}
	status := func(n int) *int { return &n }
	next := func(s string) *string { return &s }
	want := map[string]api.ProblemCodeItem{
		resources.CodeRateLimited: {Code: resources.CodeRateLimited, Kind: "problem",
			Title: "Too Many Requests", Status: status(429),
			Meaning: byCode[resources.CodeRateLimited].Meaning, Retry: true},
		resources.CodeLicenceRequired: {Code: resources.CodeLicenceRequired, Kind: "problem",
			Title: "Forbidden", Status: status(403),
			Meaning: byCode[resources.CodeLicenceRequired].Meaning, Next: next("get-licence")},
		resources.CodeVCSGroupFailed: {Code: resources.CodeVCSGroupFailed, Kind: "warning",
			Title: "Vcs group failed", Meaning: byCode[resources.CodeVCSGroupFailed].Meaning},
		resources.CodePipelineFailed: {Code: resources.CodePipelineFailed, Kind: "operation_error",
			Title: "Pipeline failed", Meaning: byCode[resources.CodePipelineFailed].Meaning},
	}
	for code, w := range want {
		if diff := cmp.Diff(w, byCode[code]); diff != "" || w.Meaning == "" {
			t.Errorf("%s (-want +got)\n%s", code, diff)
		}
	}
}

// TestProblems_Catalogue_TitleIsTheOneProblemDocumentsCarry: the
// catalogue lists each code's title, the same a problem document with that
// code carries (RFC 9457: the title is fixed for the problem type).
func TestProblems_Catalogue_TitleIsTheOneProblemDocumentsCarry(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var page struct {
		Items []api.ProblemCodeItem `json:"items"`
	}
	if err := json.Unmarshal(e.Do(http.MethodGet, "/api/v1/problems", "", nil).Body, &page); err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, it := range page.Items {
		titles[it.Code] = it.Title
	}
	token := e.Token(resources.PermTenancyRead)
	for path, code := range map[string]string{
		"/api/v1/customers/999999":   "customer_not_found",
		"/api/v1/customers?limit=0":  "invalid_parameter",
		"/api/v1/customers?cursor=x": resources.CodeInvalidCursor,
	} {
		var doc struct{ Code, Title string }
		if err := json.Unmarshal(e.Do(http.MethodGet, path, token, nil).Body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Code != code || doc.Title == "" || titles[code] != doc.Title {
			t.Errorf("%s: %s document titled %q, catalogue %q", path, doc.Code, doc.Title, titles[code])
		}
	}
}

// TestProblems_BehindTheAPISwitch: public, but like every /api/v1 path it
// answers 404 while the API is off.
func TestProblems_BehindTheAPISwitch(t *testing.T) {
	e := apitest.New(t, apitest.Options{Disabled: true})
	if r := e.Do(http.MethodGet, "/api/v1/problems", "", nil); r.Status != http.StatusNotFound {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
}

// TestProblems_AcceptNamingNoJSON_AnsweredInJSON_No406Listed: an Accept
// header naming no media type the server writes is disregarded (RFC 9110
// allows it): the answer is JSON, and the catalogue does not list a 406
// code the server never sends.
func TestProblems_AcceptNamingNoJSON_AnsweredInJSON_No406Listed(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	for _, accept := range []string{"application/xml", "text/html", "text/plain;q=1, image/png"} {
		r := e.Do(http.MethodGet, "/api/v1/problems", "", nil, "Accept", accept)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("Accept %s: %d %s", accept, r.Status, r.Header.Get("Content-Type"))
		}
	}
	for _, c := range api.ProblemCatalogue() {
		if c.Status != nil && *c.Status == http.StatusNotAcceptable {
			t.Errorf("the catalogue lists %s (406), which the server never answers", c.Code)
		}
	}
}

package api_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// conditionalAnswer is what a conditional request's answer shows.
type conditionalAnswer struct {
	Status int
	ETag   string
	Body   bool // the answer has a body
}

// getBrandIfNoneMatch GETs the brand with each value as an If-None-Match
// line of its own.
func getBrandIfNoneMatch(t *testing.T, url, tok string, lines ...string) conditionalAnswer {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/v1/brand", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	for _, v := range lines {
		req.Header.Add("If-None-Match", v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return conditionalAnswer{Status: res.StatusCode, ETag: res.Header.Get("ETag"), Body: len(body) > 0}
}

// TestBrand_IfNoneMatch_CurrentTagOrStar_304WithETagNoBody: GET /brand
// honours If-None-Match (RFC 9110, section 13.1.2): a list naming the
// current version, compared weakly (W/"2" matches "2"), or * (the brand
// always exists) is 304 Not Modified with the ETag and no body; lines
// combine into one list; anything else, a * inside a list included (the
// field is neither * nor a list of tags), is the brand as without it.
func TestBrand_IfNoneMatch_CurrentTagOrStar_304WithETagNoBody(t *testing.T) {
	e, tok := brandEnv(t)
	putBrand(e, tok, brandPut("#000001", nil, nil)) // version 2
	notModified := conditionalAnswer{Status: 304, ETag: `"2"`}
	brand := conditionalAnswer{Status: 200, ETag: `"2"`, Body: true}
	for _, tc := range []struct {
		name  string
		lines []string
		want  conditionalAnswer
	}{
		{"current", []string{`"2"`}, notModified},
		{"weak current", []string{`W/"2"`}, notModified},
		{"star", []string{`*`}, notModified},
		{"current in a list", []string{`"1", W/"2"`}, notModified},
		{"current on a second line", []string{`"1"`, `"2"`}, notModified},
		{"absent", nil, brand},
		{"stale", []string{`"1"`}, brand},
		{"stale weak", []string{`W/"1"`}, brand},
		{"another spelling", []string{`"02"`}, brand},
		{"star in a list", []string{`"1", *`}, brand},
		{"star on a second line", []string{`"1"`, `*`}, brand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := getBrandIfNoneMatch(t, e.HTTP.URL, tok, tc.lines...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("GET /brand with If-None-Match %q (-want +got):\n%s", tc.lines, diff)
			}
		})
	}
}

// TestBrand_IfMatch_Stale412_CarriesTheCurrentETag: a PUT refused for a
// stale If-Match (or a stale version in the body) says which version is
// current in its one ETag header, so a client can read again knowingly.
func TestBrand_IfMatch_Stale412_CarriesTheCurrentETag(t *testing.T) {
	e, tok := brandEnv(t)
	putBrand(e, tok, brandPut("#000001", nil, nil)) // version 2
	for _, tc := range []struct {
		name    string
		body    map[string]any
		headers []string
	}{
		{"stale If-Match", brandPut("#000002", nil, nil), []string{"If-Match", `"1"`}},
		{"stale version member", withMember(brandPut("#000002", nil, nil), "version", 1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := putBrand(e, tok, tc.body, tc.headers...)
			assertProblem(t, r, 412, "precondition_failed")
			if diff := cmp.Diff([]string{`"2"`}, r.Header.Values("ETag")); diff != "" {
				t.Fatalf("ETag of the 412 (-want +got):\n%s", diff)
			}
		})
	}
}

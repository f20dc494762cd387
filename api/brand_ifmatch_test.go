package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBrand_IfMatch_SeveralHeaderLinesAreOneList: If-Match is a list, and
// its lines combine into one (RFC 9110, section 5.3): `If-Match: "9"` and
// `If-Match: "1"` on two lines match version 1 as `"9", "1"` does, whichever
// line comes first; lines naming no current version are 412, and so are
// lines where one is `*`: the combined field is neither `*` nor a list of
// tags, and RFC 9110 (section 13.1.1) makes such a condition false.
func TestBrand_IfMatch_SeveralHeaderLinesAreOneList(t *testing.T) {
	e, tok := brandEnv(t)
	body, _ := json.Marshal(brandPut("#0000aa", nil, nil))
	put := func(ifMatch ...string) int {
		req, _ := http.NewRequest("PUT", e.HTTP.URL+"/api/v1/brand", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		for _, v := range ifMatch {
			req.Header.Add("If-Match", v)
		}
		res, err := e.HTTP.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	got := map[string]int{"stale lines": put(`"9"`, `W/"1"`), "current second": put(`"9"`, `"1"`)}
	got["current first, now stale"] = put(`"1"`, `"9"`) // version 2 since the PUT before
	got["star second"] = put(`"9"`, `*`)
	want := map[string]int{"stale lines": 412, "current second": 200, "current first, now stale": 412,
		"star second": 412}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("PUT statuses (-want +got):\n%s", diff)
	}
}

package api_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func brandEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	return e, e.Token(resources.PermBrandWrite, resources.PermAuditRead)
}

// readBrand GETs the brand and checks that its ETag is its version.
func readBrand(t *testing.T, e *apitest.Env, tok string) map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/v1/brand", tok, nil)
	b := r.JSON(t)
	if r.Status != 200 || r.Header.Get("ETag") != fmt.Sprintf(`"%v"`, b["version"]) {
		t.Fatalf("GET /brand: %d ETag %q %v", r.Status, r.Header.Get("ETag"), b)
	}
	return b
}

// brandPut is a full PUT body: the writable members.
func brandPut(color string, logo, favicon any) map[string]any {
	return map[string]any{"brand_color": color, "logo_asset_id": logo, "favicon_asset_id": favicon}
}

func putBrand(e *apitest.Env, tok string, body map[string]any, headers ...string) *apitest.Response {
	e.T.Helper()
	return e.Do("PUT", "/api/v1/brand", tok, body, headers...)
}

func TestBrand_Default_ReadWithETag(t *testing.T) {
	e, tok := brandEnv(t)
	b := readBrand(t, e, tok)
	delete(b, "updated_at")
	want := map[string]any{"brand_color": "#2563eb", "logo_asset_id": nil, "favicon_asset_id": nil,
		"first_party": false, "attribution": "Powered by Cloud Platform", "version": 1.0}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Fatalf("default brand (-want +got):\n%s", diff)
	}
	if r := e.Do("GET", "/api/v1/brand", e.Token(resources.PermBrandRead), nil); r.Status != 200 {
		t.Fatalf("brand-read-global: %d", r.Status)
	}
	assertProblem(t, e.Do("GET", "/api/v1/brand", e.Token(resources.PermAuditRead), nil), 403, "forbidden")
}

func TestBrand_Put_ReplacesLowerCasesBumpsVersionAuditsNoChangeKeepsVersion(t *testing.T) {
	e, tok := brandEnv(t)
	r := putBrand(e, tok, brandPut("#ABCDEF", nil, nil))
	b := r.JSON(t)
	if r.Status != 200 || b["brand_color"] != "#abcdef" || b["version"] != 2.0 || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("PUT: %d %v %v", r.Status, r.Header.Get("ETag"), b)
	}
	if diff := cmp.Diff(b, readBrand(t, e, tok)); diff != "" {
		t.Fatalf("GET after PUT (-put +get):\n%s", diff)
	}
	again := putBrand(e, tok, brandPut("#abcdef", nil, nil)).JSON(t)
	if again["version"] != 2.0 {
		t.Fatalf("a PUT changing nothing bumped the version: %v", again)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=brand")
	if len(items) != 1 || items[0]["action"] != "brand.update" ||
		items[0]["before_state"].(map[string]any)["brand_color"] != "#2563eb" ||
		items[0]["after_state"].(map[string]any)["brand_color"] != "#abcdef" {
		t.Fatalf("brand events: %v", items)
	}
}

func TestBrand_Put_InvalidBodies422NothingChanges(t *testing.T) {
	e, tok := brandEnv(t)
	for name, tc := range map[string]struct {
		body  map[string]any
		code  string
		field string
	}{
		"colour without #":    {brandPut("2563eb", nil, nil), "validation_failed", "brand_color"},
		"short colour":        {brandPut("#25e", nil, nil), "validation_failed", "brand_color"},
		"favicon omitted":     {map[string]any{"brand_color": "#000000", "logo_asset_id": nil}, "validation_failed", "favicon_asset_id"},
		"unknown member":      {map[string]any{"brand_color": "#000000", "logo_asset_id": nil, "favicon_asset_id": nil, "font": "x"}, "validation_failed", "font"},
		"first_party changed": {withMember(brandPut("#000000", nil, nil), "first_party", true), "read_only_field", "first_party"},
		"attribution changed": {withMember(brandPut("#000000", nil, nil), "attribution", "Mine"), "read_only_field", "attribution"},
		"updated_at changed":  {withMember(brandPut("#000000", nil, nil), "updated_at", "2020-01-01T00:00:00Z"), "read_only_field", "updated_at"},
		"version null":        {withMember(brandPut("#000000", nil, nil), "version", nil), "validation_failed", "version"},
		"unknown logo":        {brandPut("#000000", "99", nil), "brand_asset_invalid", "logo_asset_id"},
		"unknown favicon":     {brandPut("#000000", nil, "99"), "brand_asset_invalid", "favicon_asset_id"},
		"favicon not an id":   {brandPut("#000000", nil, "x"), "validation_failed", "favicon_asset_id"},
	} {
		t.Run(name, func(t *testing.T) {
			m := assertProblem(t, putBrand(e, tok, tc.body), 422, tc.code)
			if m["field"] != tc.field {
				t.Fatalf("field %v, want %s", m["field"], tc.field)
			}
		})
	}
	if b := readBrand(t, e, tok); b["version"] != 1.0 || b["brand_color"] != "#2563eb" {
		t.Fatalf("brand after refusals: %v", b)
	}
}

func withMember(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }

func TestBrand_Put_ReadOnlyMembersSentBackAsRead_Accepted(t *testing.T) {
	e, tok := brandEnv(t)
	b := readBrand(t, e, tok)
	b["brand_color"] = "#112233"
	r := putBrand(e, tok, b)
	if r.Status != 200 || r.JSON(t)["brand_color"] != "#112233" || r.JSON(t)["first_party"] != false {
		t.Fatalf("PUT of the read brand: %d %s", r.Status, r.Body)
	}
}

func TestBrand_IfMatch_StaleIs412NothingChanged(t *testing.T) {
	e, tok := brandEnv(t)
	putBrand(e, tok, brandPut("#000001", nil, nil)) // version 2
	for name, tc := range map[string]struct {
		ifMatch string
		status  int
	}{
		"stale":         {`"1"`, 412},
		"weak":          {`W/"2"`, 412},
		"garbage":       {`abc`, 412},
		"one of a list": {`"7", "2"`, 200},
		"any":           {`*`, 200},
	} {
		t.Run(name, func(t *testing.T) {
			v := readBrand(t, e, tok)["version"]
			ifMatch := tc.ifMatch
			if tc.status == 200 && ifMatch != "*" {
				ifMatch = fmt.Sprintf(`"7", "%v"`, v)
			}
			r := putBrand(e, tok, brandPut(fmt.Sprintf("#%06x", len(name)), nil, nil), "If-Match", ifMatch)
			if tc.status == 412 {
				assertProblem(t, r, 412, "precondition_failed")
				if after := readBrand(t, e, tok)["version"]; after != v {
					t.Fatalf("a refused PUT changed the version %v → %v", v, after)
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("If-Match %s: %d %s", ifMatch, r.Status, r.Body)
			}
		})
	}
	// A stale version in the body is a precondition too.
	stale := withMember(brandPut("#000009", nil, nil), "version", 1)
	assertProblem(t, putBrand(e, tok, stale), 412, "precondition_failed")
}

// TestBrand_IfMatch_StrongComparison_OnlyTheExactTagMatches: If-Match
// compares strongly, so a tag spelled otherwise than the ETag ("02", "+2",
// an unbalanced quote) is another tag and the PUT is 412, not applied.
func TestBrand_IfMatch_StrongComparison_OnlyTheExactTagMatches(t *testing.T) {
	e, tok := brandEnv(t)
	putBrand(e, tok, brandPut("#000001", nil, nil)) // version 2
	for _, ifMatch := range []string{`"02"`, `"+2"`, `"2`, `2"`, `" 2"`, `"2.0"`} {
		assertProblem(t, putBrand(e, tok, brandPut("#0000ff", nil, nil), "If-Match", ifMatch),
			412, "precondition_failed")
		if v := readBrand(t, e, tok)["version"]; v != 2.0 {
			t.Fatalf("If-Match %s changed the brand to version %v", ifMatch, v)
		}
	}
	for i, ifMatch := range []string{`"2"`, `3`} { // the exact tag, or the bare version
		r := putBrand(e, tok, brandPut(fmt.Sprintf("#00000%d", i+2), nil, nil), "If-Match", ifMatch)
		if r.Status != 200 {
			t.Fatalf("If-Match %s: %d %s", ifMatch, r.Status, r.Body)
		}
	}
}

// TestBrand_ConcurrentPuts_StaleIfMatchRaceOneWinsNoUpdateLost: PUTs that all
// read version v race; exactly one applies, the rest are 412. Unconditional
// PUTs all apply, one after another: every one gets its own version.
func TestBrand_ConcurrentPuts_StaleIfMatchRaceOneWinsNoUpdateLost(t *testing.T) {
	e, tok := brandEnv(t)
	const n = 8
	race := func(base int, headers ...string) (statuses map[int]int, versions []int) {
		statuses = map[int]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := putBrand(e, tok, brandPut(fmt.Sprintf("#0000%02x", base+i), nil, nil), headers...)
				mu.Lock()
				defer mu.Unlock()
				statuses[r.Status]++
				if r.Status == 200 {
					versions = append(versions, int(r.JSON(t)["version"].(float64)))
				}
			})
		}
		wg.Wait()
		sort.Ints(versions)
		return statuses, versions
	}
	statuses, versions := race(0x10, "If-Match", `"1"`)
	if diff := cmp.Diff(map[int]int{200: 1, 412: n - 1}, statuses); diff != "" || fmt.Sprint(versions) != "[2]" {
		t.Fatalf("conditional race (-want +got):\n%s versions %v", diff, versions)
	}
	statuses, versions = race(0x20) // colours all new: each PUT changes the brand
	if diff := cmp.Diff(map[int]int{200: n}, statuses); diff != "" || fmt.Sprint(versions) != "[3 4 5 6 7 8 9 10]" {
		t.Fatalf("unconditional PUTs (-want +got):\n%s versions %v", diff, versions)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'brand.update'"); n != 9 {
		t.Fatalf("%d brand events, want 9", n)
	}
}

func TestBrand_WritesNeedBrandWriteAndTheBrandFeature(t *testing.T) {
	e, tok := brandEnv(t)
	m := assertProblem(t, putBrand(e, e.Token(resources.PermBrandRead), brandPut("#000000", nil, nil)), 403, "forbidden")
	if diff := cmp.Diff([]any{"brand-write-global"}, m["required"]); diff != "" {
		t.Fatalf("required (-want +got):\n%s", diff)
	}
	p := licencePayload(e)
	p.Features = []string{resources.FeatureAI}
	putLicence(e, e.Token(resources.PermLicenceAdmin), p)
	assertLicenceRefusal(t, putBrand(e, tok, brandPut("#000000", nil, nil)), "licence_restricted", "valid")
	assertLicenceRefusal(t, e.Do("POST", "/api/v1/brand/assets?kind=logo", tok, string(pngBytes(t)), "Content-Type", "image/png"),
		"licence_restricted", "valid")
	readBrand(t, e, tok)
}

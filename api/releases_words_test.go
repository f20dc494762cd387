package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestReleases_PromotionRefusals_DetailSaysWhatToDo: each refusal of a
// promotion says, besides what is wrong, what the release engineer does next
// (the contract's problem detail is text for people): the components the
// project enables, the version the source environment runs, or which
// environment to promote to first.
func TestReleases_PromotionRefusals_DetailSaysWhatToDo(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", shop("", "components", []string{"app-api"}))
	deployed(t, e, tok, pid, "app-api", "dev", "1.0.0")
	detail := func(body map[string]any) string {
		return postPromotion(e, tok, pid, body).JSON(t)["detail"].(string)
	}
	got := []string{
		detail(promotion("www", "dev", "1.0.0")),
		detail(promotion("app-api", "dev", "")),
		detail(promotion("app-api", "uat", "2.0.0")),
		detail(promotion("app-api", "prod", "")),
	}
	want := []string{
		"component www is not enabled on project " + pid + " (it enables app-api); " +
			"add it to the project's components first",
		"a dev promotion names the build's version: send version",
		"dev runs 1.0.0, not 2.0.0: leave version out to promote 1.0.0, or promote 2.0.0 to dev first",
		"uat reports no version of app-api to promote: promote app-api to uat first",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("details (-want +got):\n%s", d)
	}
}

// TestReleases_InvalidBody_DetailNamesTheMemberAndTheRule: a 422
// validation_failed said only "validation failed" in its detail, leaving a
// person to dig the reason out of errors; the detail now names the first
// offending member and what is wrong with it, as 400 invalid_parameter does.
func TestReleases_InvalidBody_DetailNamesTheMemberAndTheRule(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	lock := "/api/v1/projects/" + pid + "/prod-lock"
	var got []string
	for _, r := range []*apitest.Response{
		postPromotion(e, tok, pid, promotion("app-api", "staging", "1.0.0")),
		postPromotion(e, tok, pid, promotion("app-api", "dev", strings.Repeat("v", 65))),
		e.Do("PUT", lock, tok, map[string]any{"locked": "yes"}),
		e.Do("PUT", lock, tok, map[string]any{"locked": true, "why": "freeze"}),
	} {
		got = append(got, assertProblem(t, r, 422, "validation_failed")["detail"].(string))
	}
	want := []string{
		`target_env: expected value to be one of "dev, uat, prod"`,
		"version: expected length <= 64",
		"locked: expected boolean",
		"why: unexpected property",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("details (-want +got):\n%s", d)
	}
}

// TestReleases_DataCopyIntoLockedProd_DetailSaysHowToUnlock: a data copy
// into PROD refused by the lock said only that the lock is set; it now says
// how a person releases it.
func TestReleases_DataCopyIntoLockedProd_DetailSaysHowToUnlock(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Do("PUT", "/api/v1/projects/"+pid+"/prod-lock", tok, map[string]any{"locked": true})
	_, err := e.Store.BookDataCopy(context.Background(), resources.Actor{Label: apitest.AdminEmail},
		parseInt(t, pid), "uat", "prod")
	re, _ := resources.AsError(err)
	if re == nil {
		t.Fatalf("copy into locked PROD: %v", err)
	}
	want := "the PROD data lock of project " + pid + " (SHOP) is set: unlock it with PUT /api/v1/projects/" +
		pid + "/prod-lock {\"locked\": false, \"confirm_unlock\": \"SHOP\"} first"
	if d := cmp.Diff(want, re.Detail); d != "" {
		t.Fatalf("detail (-want +got):\n%s", d)
	}
}

// TestReleases_DecideEndedPromotion_BothRefusalsSayNotAwaitingApproval: an
// approval of a promotion that no longer awaits one said "… is failed, not
// awaiting approval", a rejection only "… is failed"; both now say the same.
func TestReleases_DecideEndedPromotion_BothRefusalsSayNotAwaitingApproval(t *testing.T) {
	e, tok := projectEnv(t)
	_, id := prodAwaitingApproval(t, e, tok)
	ctx, by := context.Background(), resources.Actor{Label: otherAdmin}
	if _, err := e.Store.RejectRelease(ctx, by, id, "not now"); err != nil {
		t.Fatal(err)
	}
	var got []string
	_, err := e.Store.ApproveRelease(ctx, by, id, "")
	got = append(got, codeOf(err)+": "+detailOf(err))
	_, err = e.Store.RejectRelease(ctx, by, id, "again")
	got = append(got, codeOf(err)+": "+detailOf(err))
	d := "not_awaiting_approval: release operation " + formatInt(id) + " is failed, not awaiting approval"
	if diff := cmp.Diff([]string{d, d}, got); diff != "" {
		t.Fatalf("refusals (-want +got):\n%s", diff)
	}
}

func detailOf(err error) string {
	if re, ok := resources.AsError(err); ok {
		return re.Detail
	}
	return ""
}

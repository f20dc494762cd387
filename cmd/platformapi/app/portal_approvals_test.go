package app

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
	"platformapi/resources/testkit"
)

// waitingPromotion is the demo world's prod promotion awaiting approval.
func (w *portalWorld) waitingPromotion() resources.ReleaseOperation {
	w.t.Helper()
	page, err := w.m.store.ListFleetReleaseOperations(w.t.Context(),
		resources.ReleaseFilter{Status: []string{resources.OpAwaitingApproval}}, resources.PageQuery{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		w.t.Fatalf("the demo world's waiting promotions: %v %v", page.Items, err)
	}
	return page.Items[0]
}

// releaseStatus is the release operation's status now.
func (w *portalWorld) releaseStatus(id int64) string {
	w.t.Helper()
	op, err := w.m.store.GetReleaseOperation(w.t.Context(), id)
	if err != nil || op == nil {
		w.t.Fatalf("release operation %d: %v", id, err)
	}
	return op.Status
}

// TestPortalApprovals_Approve_RequesterNeedsANote_ThenThePromotionSucceeds:
// the page shows the waiting promotion with the requester, version and the
// environment's current version; the requester is refused without a note;
// the administrator's approval is audited with the request and the
// pipeline then deploys it (the operation succeeds).
func TestPortalApprovals_Approve_RequesterNeedsANote_ThenThePromotionSucceeds(t *testing.T) {
	w := startPortalDemo(t)
	op := w.waitingPromotion()
	id := strconv.FormatInt(op.ID, 10)
	w.signedInAs(demoJonas)
	page := w.get("/portal/approvals")
	for _, want := range []string{`id="approval-` + id + `"`, op.ProjectShortName, *op.Version,
		"note (required: you count as the requester)", "runs <code>"} {
		if !strings.Contains(page, want) {
			t.Fatalf("approvals page lacks %q:\n%s", want, page)
		}
	}
	res, body := w.post("/portal/approvals/"+id+"/approve", url.Values{"note": {""}}, "req-jonas")
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "only with a note") {
		t.Fatalf("the requester approving without a note: %d\n%s", res.StatusCode, body)
	}
	w.signedInAs(demoAdmin)
	res, _ = w.post("/portal/approvals/"+id+"/approve", url.Values{"note": {"checked in uat"}}, "req-approve")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/approvals?done=approved" {
		t.Fatalf("approve: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE action = 'release.approve' AND actor = ?
		AND auth_kind = 'session' AND request_id = 'req-approve' AND source_ip = '127.0.0.1'`, demoAdmin); n != 1 {
		t.Fatalf("audit rows of the approval: %d", n)
	}
	testkit.Eventually(t, 20*time.Second, "the approved promotion succeeds", func() bool {
		return w.releaseStatus(op.ID) == resources.OpSucceeded
	})
	if page := w.get("/portal/approvals?done=approved"); !strings.Contains(page, "Nothing waits for approval.") {
		t.Fatalf("the approved promotion is still listed:\n%s", page)
	}
	res, body = w.post("/portal/approvals/"+id+"/reject", url.Values{"reason": {"too late"}}, "req-late")
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "release operation "+id+" is succeeded") {
		t.Fatalf("rejecting a decided promotion: %d\n%s", res.StatusCode, body)
	}
}

// TestPortalApprovals_Reject_NeedsAReason_ThenFailsWithIt: a rejection
// without a reason is refused; with one the operation ends failed.
func TestPortalApprovals_Reject_NeedsAReason_ThenFailsWithIt(t *testing.T) {
	w := startPortalDemo(t)
	op := w.waitingPromotion()
	id := strconv.FormatInt(op.ID, 10)
	w.signedInAs(demoAdmin)
	if res, _ := w.post("/portal/approvals/"+id+"/reject", url.Values{"reason": {" "}}, "r1"); res.StatusCode !=
		http.StatusUnprocessableEntity {
		t.Fatalf("reject without a reason: %d", res.StatusCode)
	}
	res, _ := w.post("/portal/approvals/"+id+"/reject", url.Values{"reason": {"not during the sale"}}, "r2")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject: %d", res.StatusCode)
	}
	got, err := w.m.store.GetReleaseOperation(t.Context(), op.ID)
	if err != nil || got.Status != resources.OpFailed || got.Decision == nil || got.Decision.Reason == nil ||
		*got.Decision.Reason != "not during the sale" {
		t.Fatalf("the rejected promotion: %+v %v", got, err)
	}
	if res, _ := w.post("/portal/approvals/0/approve", nil, "r3"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("approve id 0: %d", res.StatusCode)
	}
}

// TestPortalApprovals_ProjectRetired_ApproveRefusedProjectRetired_RejectStillWorks:
// once the project of a waiting prod promotion is retired, approving it is
// refused (409, the project is retired; nothing recorded, prod unchanged);
// rejecting it still ends it failed.
func TestPortalApprovals_ProjectRetired_ApproveRefusedProjectRetired_RejectStillWorks(t *testing.T) {
	w := startPortalDemo(t)
	op := w.waitingPromotion()
	id := strconv.FormatInt(op.ID, 10)
	prodBefore := w.prodDeployment(op)
	err := w.m.store.RetireProject(t.Context(), resources.Actor{Label: demoAdmin}, op.ProjectID)
	if err != nil {
		t.Fatalf("retiring the project: %v", err)
	}
	w.signedInAs(demoAdmin)
	note := url.Values{"note": {"approve on retired"}}
	res, body := w.post("/portal/approvals/"+id+"/approve", note, "req-retired")
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "retired") {
		t.Fatalf("approving a promotion of a retired project: %d\n%s", res.StatusCode, body)
	}
	if st := w.releaseStatus(op.ID); st != resources.OpAwaitingApproval {
		t.Fatalf("after the refused approval the promotion is %s", st)
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE action = 'release.approve'
		AND request_id = 'req-retired'`); n != 0 {
		t.Fatalf("the refused approval was audited: %d rows", n)
	}
	reason := url.Values{"reason": {"the project is retired"}}
	res, _ = w.post("/portal/approvals/"+id+"/reject", reason, "req-reject")
	if res.StatusCode != http.StatusSeeOther || w.releaseStatus(op.ID) != resources.OpFailed {
		t.Fatalf("rejecting a promotion of a retired project: %d", res.StatusCode)
	}
	if got := w.prodDeployment(op); got != prodBefore {
		t.Fatalf("prod of the retired project changed: %+v, was %+v", got, prodBefore)
	}
}

// prodDeployment is what prod runs of op's component ("" none reported).
func (w *portalWorld) prodDeployment(op resources.ReleaseOperation) string {
	w.t.Helper()
	st, err := w.m.store.ReleaseState(w.t.Context(), op.ProjectID)
	if err != nil {
		w.t.Fatalf("release state of project %d: %v", op.ProjectID, err)
	}
	if d := st.Deployments[resources.EnvProd][*op.Component]; d != nil {
		return d.Version + " " + d.ReportedBy
	}
	return ""
}

// TestPortalApprovals_WithoutReleaseKeys_403NothingShown: the waiting
// promotions (project, version, requester) are shown only to people who
// may read release operations (releases-read-global, releases-write-global)
// or administrators, as GET /release-operations; anyone else gets a 403
// page naming the keys, and no link to the page.
func TestPortalApprovals_WithoutReleaseKeys_403NothingShown(t *testing.T) {
	w := startPortalDemo(t)
	op := w.waitingPromotion()
	id := strconv.FormatInt(op.ID, 10)
	w.signedInAs(demoLi) // AI engineer: no release keys
	res, body := w.do(http.MethodGet, w.url+"/portal/approvals", nil)
	if res.StatusCode != http.StatusForbidden || strings.Contains(body, `id="approval-`+id+`"`) ||
		strings.Contains(body, op.RequestedBy) || !strings.Contains(body, resources.PermReleasesRead) {
		t.Fatalf("approvals page without release keys: %d\n%s", res.StatusCode, body)
	}
	res, body = w.post("/portal/approvals/"+id+"/approve", url.Values{"note": {"x"}}, "req-li")
	if res.StatusCode != http.StatusForbidden || strings.Contains(body, op.RequestedBy) {
		t.Fatalf("approval without release keys: %d\n%s", res.StatusCode, body)
	}
	if page := w.get("/portal/"); strings.Contains(page, `href="/portal/approvals"`) {
		t.Fatalf("the front page links the approvals page:\n%s", page)
	}
	if st := w.releaseStatus(op.ID); st != resources.OpAwaitingApproval {
		t.Fatalf("the promotion is %s", st)
	}
}

package portal

import (
	"net/http"
	"slices"
	"strings"

	"platformapi/resources"
)

// approvalsPage lists the promotions awaiting a person.
type approvalsPage struct {
	Waiting []approval
	More    bool // more than listLimit wait: the oldest are not shown
}

// approval is one waiting promotion with what the decider needs to know.
type approval struct {
	resources.ReleaseOperation
	Current      string // the version the target environment runs now ("" none reported)
	Locked       bool   // the project's PROD data lock is set
	NoteRequired bool   // the signed-in person counts as the requester
}

// routeApprovals registers the approvals page and its decisions.
func (h *Handler) routeApprovals(mux *http.ServeMux) {
	h.handle(mux, "GET /portal/approvals", h.signedIn("portal-approvals", h.approvals),
		"**Approvals** (`releases-read-global`, `releases-write-global` or "+
			"`admin`; 403 otherwise): prod promotions awaiting a person, with the "+
			"requester, version, source and what the environment runs now")
	h.handle(mux, "POST /portal/approvals/{id}/approve", h.signedIn("portal-approve", h.decide(true)),
		"approves with a `note` (required when you count as the requester: the "+
			"token's owner or minter); `releases-write-global` or `admin`; refused "+
			"(409 `project_retired`) once the project is retired")
	h.handle(mux, "POST /portal/approvals/{id}/reject", h.signedIn("portal-reject", h.decide(false)),
		"rejects with a `reason`: the operation ends `failed` with it")
}

// approvals shows the page with the notice of the last decision.
func (h *Handler) approvals(w http.ResponseWriter, r *http.Request, p resources.Session) {
	h.showApprovals(w, r, p, http.StatusOK, view{Notice: notice(r)})
}

// approvalReaders are the keys that show the waiting promotions: those of
// GET /release-operations, and admin (a decider).
var approvalReaders = []string{resources.PermReleasesRead, resources.PermReleasesWrite,
	resources.PermAdmin}

// showApprovals renders the waiting promotions, each with its environment's
// current version; a person without approvalReaders gets a 403 page.
func (h *Handler) showApprovals(w http.ResponseWriter, r *http.Request, p resources.Session, status int, v view) {
	if !resources.HasAny(p.Permissions, approvalReaders) {
		v.Title, v.Person = "Approvals", &p
		v.Problem = "The Approvals page needs any one of: " + strings.Join(approvalReaders, ", ") +
			"; ask an administrator."
		h.render(w, r, http.StatusForbidden, refusalTemplate, v)
		return
	}
	page, err := h.cfg.Store.ListFleetReleaseOperations(r.Context(),
		resources.ReleaseFilter{Status: []string{resources.OpAwaitingApproval}}, resources.PageQuery{Limit: listLimit})
	var pg approvalsPage
	states := map[int64]*resources.ReleaseState{} // read once per project, not per promotion
	for i := 0; err == nil && i < len(page.Items); i++ {
		var a approval
		a, err = h.approval(r, p, page.Items[i], states)
		pg.Waiting = append(pg.Waiting, a)
	}
	if err != nil {
		h.fault(w, r, "listing approvals", err)
		return
	}
	pg.More = page.Next != nil
	v.Title, v.Person, v.Page = "Approvals", &p, pg
	h.render(w, r, status, approvalsTemplate, v)
}

// approval adds the target environment's state to op: its project's, read
// into states unless an earlier promotion of the page read it.
func (h *Handler) approval(r *http.Request, p resources.Session, op resources.ReleaseOperation,
	states map[int64]*resources.ReleaseState) (approval, error) {
	a := approval{ReleaseOperation: op, NoteRequired: slices.Contains(op.Requesters, p.UserID)}
	st, read := states[op.ProjectID]
	if !read {
		var err error
		if st, err = h.cfg.Store.ReleaseState(r.Context(), op.ProjectID); err != nil {
			return a, err
		}
		states[op.ProjectID] = st
	}
	if st == nil {
		return a, nil
	}
	a.Locked = st.ProdLock.Locked
	if op.Component != nil {
		if d := st.Deployments[op.TargetEnv][*op.Component]; d != nil {
			a.Current = d.Version
		}
	}
	return a, nil
}

// decide approves (with an optional note) or rejects (with a reason) the
// promotion {id}, by the one rule the portal CLI also applies.
func (h *Handler) decide(approve bool) personHandler {
	return func(w http.ResponseWriter, r *http.Request, p resources.Session) {
		id, err := pathID(r, resources.CodeReleaseOperationNotFound)
		if err == nil {
			if approve {
				note := strings.TrimSpace(r.PostFormValue("note"))
				_, err = h.cfg.Store.ApproveRelease(r.Context(), actingAs(r, p), id, note)
			} else {
				reason := strings.TrimSpace(r.PostFormValue("reason"))
				_, err = h.cfg.Store.RejectRelease(r.Context(), actingAs(r, p), id, reason)
			}
		}
		if err == nil {
			done(w, r, Path+"approvals", map[bool]string{true: "approved", false: "rejected"}[approve])
			return
		}
		h.refused(w, r, p, "deciding a promotion", err, func(status int, v view) {
			h.showApprovals(w, r, p, status, v)
		})
	}
}

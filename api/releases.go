package api

import (
	"time"

	"platformapi/resources"
)

// Decision is a person's approval or rejection of a prod promotion.
type Decision struct {
	Outcome string    `json:"outcome" enum:"approved,rejected"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Note    *string   `json:"note" nullable:"true"`
	Reason  *string   `json:"reason" nullable:"true"`
}

// ReleaseOperation is a promotion or a data copy.
type ReleaseOperation struct {
	ID               string                   `json:"id" example:"12"`
	OperationID      string                   `json:"operation_id" example:"release:12" doc:"The same operation at GET /operations/{id}"`
	ProjectID        string                   `json:"project_id"`
	ProjectShortName string                   `json:"project_short_name" example:"SHOP" doc:"The project's short name"`
	CustomerID       string                   `json:"customer_id" doc:"The project's customer"`
	Kind             string                   `json:"kind" doc:"promotion or data_copy, …"`
	Component        *string                  `json:"component" nullable:"true" doc:"null for data copies"`
	SourceEnv        *string                  `json:"source_env" nullable:"true"`
	TargetEnv        string                   `json:"target_env"`
	Version          *string                  `json:"version" nullable:"true"`
	Status           string                   `json:"status" doc:"pending, awaiting_approval (a prod promotion), awaiting_operator (a data copy), running, succeeded, failed, …"`
	RequestedBy      string                   `json:"requested_by"`
	RequestedVia     string                   `json:"requested_via" doc:"api or portal"`
	Decision         Nullable[Decision]       `json:"decision" doc:"A person's decision on a prod promotion; null otherwise"`
	Error            Nullable[OperationError] `json:"error" doc:"Why it failed, as a problem document; null otherwise"`
	CreatedAt        time.Time                `json:"created_at"`
	UpdatedAt        time.Time                `json:"updated_at"`
	FinishedAt       *time.Time               `json:"finished_at" nullable:"true"`
}

func releaseView(r resources.ReleaseOperation) ReleaseOperation {
	v := ReleaseOperation{ID: formatID(r.ID), OperationID: resources.ReleaseOperationRef(r.ID), ProjectID: formatID(r.ProjectID),
		ProjectShortName: r.ProjectShortName, CustomerID: formatID(r.CustomerID), Kind: r.Kind,
		Component: r.Component, SourceEnv: r.SourceEnv, TargetEnv: r.TargetEnv, Version: r.Version,
		Status: r.Status, RequestedBy: r.RequestedBy, RequestedVia: r.RequestedVia, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), FinishedAt: utcPtr(r.FinishedAt)}
	v.Decision = NullOf[Decision](nil)
	if d := r.Decision; d != nil {
		v.Decision = NullOf(&Decision{Outcome: d.Outcome, By: d.By, At: d.At.UTC(), Note: d.Note, Reason: d.Reason})
	}
	v.Error = operationErrorView(r.Error, v.OperationID)
	return v
}

// ProdLock is a project's PROD data lock.
type ProdLock struct {
	ProjectID string     `json:"project_id"`
	Locked    bool       `json:"locked" doc:"While locked, every data copy into PROD is refused; code promotion is unaffected"`
	ChangedAt *time.Time `json:"changed_at" nullable:"true"`
	ChangedBy *string    `json:"changed_by" nullable:"true"`
}

func prodLockView(l resources.ProdLock) ProdLock {
	return ProdLock{ProjectID: formatID(l.ProjectID), Locked: l.Locked, ChangedAt: utcPtr(l.ChangedAt), ChangedBy: l.ChangedBy}
}

// Deployment is what a release pipeline last reported.
type Deployment struct {
	Version    string    `json:"version"`
	ReportedAt time.Time `json:"reported_at"`
	ReportedBy string    `json:"reported_by" example:"pipeline:8812"`
}

// ReleaseState is per environment and component the last reported version,
// the PROD data lock and the open operations.
type ReleaseState struct {
	ProjectID      string                                     `json:"project_id"`
	Environments   map[string]map[string]Nullable[Deployment] `json:"environments" doc:"dev, uat, prod → app-api, www → last report or null"`
	ProdLock       ProdLock                                   `json:"prod_lock"`
	OpenOperations []ReleaseOperation                         `json:"open_operations"`
}

func releaseStateView(st resources.ReleaseState) ReleaseState {
	v := ReleaseState{ProjectID: formatID(st.ProjectID), ProdLock: prodLockView(st.ProdLock),
		Environments: map[string]map[string]Nullable[Deployment]{}, OpenOperations: []ReleaseOperation{}}
	for env, comps := range st.Deployments {
		v.Environments[env] = map[string]Nullable[Deployment]{}
		for c, d := range comps {
			var dv *Deployment
			if d != nil {
				dv = &Deployment{Version: d.Version, ReportedAt: d.ReportedAt.UTC(), ReportedBy: d.ReportedBy}
			}
			v.Environments[env][c] = NullOf(dv)
		}
	}
	for _, r := range st.Open {
		v.OpenOperations = append(v.OpenOperations, releaseView(r))
	}
	return v
}

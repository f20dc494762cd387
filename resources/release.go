package resources

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Release environments, kinds and how a release operation was requested.
const (
	EnvSandbox         = "sandbox"
	EnvDev             = "dev"
	EnvUAT             = "uat"
	EnvProd            = "prod"
	ReleasePromotion   = "promotion"
	ReleaseDataCopy    = "data_copy"
	RequestedViaAPI    = "api"
	RequestedViaPortal = "portal"
	RecoveryPromotion  = "promotion_created"
)

// Release problem codes.
const (
	CodeReleaseOperationNotFound = "release_operation_not_found"
	CodeVMProjectsUnsupported    = "vm_projects_unsupported"
	CodeComponentNotEnabled      = "component_not_enabled"
	CodeVersionNotAtSource       = "version_not_at_source"
	CodeVersionRequired          = "version_required"
	CodeUnlockNotConfirmed       = "unlock_not_confirmed"
	CodeProdLocked               = "prod_data_locked"
	CodeApprovalNoteRequired     = "approval_note_required"
	CodeNotAwaitingApproval      = "not_awaiting_approval"
	CodeReleaseNotDispatched     = "release_not_dispatched"
)

// Components lists the components a project can enable.
var Components = []string{ComponentAppAPI, ComponentWWW}

// Environments lists a project's environments, lowest first.
var Environments = []string{EnvSandbox, EnvDev, EnvUAT, EnvProd}

// CheckDataCopy refuses a data copy between unknown environments or from an
// environment into itself.
func CheckDataCopy(from, to string) error {
	switch {
	case !slices.Contains(Environments, from):
		return Invalid("from", CodeValidationFailed, "unknown environment %q; one of sandbox, dev, uat, prod", from)
	case !slices.Contains(Environments, to):
		return Invalid("to", CodeValidationFailed, "unknown environment %q; one of sandbox, dev, uat, prod", to)
	case from == to:
		return Invalid("to", CodeValidationFailed, "a data copy goes from one environment into another")
	}
	return nil
}

// Decision is a person's approval or rejection of a prod promotion.
type Decision struct {
	Outcome string    `json:"outcome"` // approved or rejected
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Note    *string   `json:"note"`
	Reason  *string   `json:"reason"`
}

// ReleaseOperation is a promotion or a data copy of a project.
type ReleaseOperation struct {
	ID           int64
	ProjectID    int64
	Kind         string
	Component    *string
	SourceEnv    *string
	TargetEnv    string
	Version      *string
	Status       string
	RequestedBy  string
	RequestedVia string
	Requesters   []int64 // people who count as the requester (token owner and minter)
	Decision     *Decision
	Error        *OperationError
	CreatedAt    time.Time
	UpdatedAt    time.Time
	FinishedAt   *time.Time

	// ProjectShortName and CustomerID are the project's, as every read
	// answers them.
	ProjectShortName string
	CustomerID       int64
}

// Deployment is the version a pipeline last reported for one environment
// and component.
type Deployment struct {
	Version    string    `json:"version"`
	ReportedAt time.Time `json:"reported_at"`
	ReportedBy string    `json:"reported_by"`
}

// ProdLock is a project's PROD data lock; its JSON form is the audit state.
type ProdLock struct {
	ProjectID int64      `json:"project_id"`
	Locked    bool       `json:"locked"`
	ChangedAt *time.Time `json:"changed_at"`
	ChangedBy *string    `json:"changed_by"`
}

// ReleaseState is what a project runs where, its PROD data lock and its
// open release operations.
type ReleaseState struct {
	ProjectID   int64
	Deployments map[string]map[string]*Deployment // env → component → last report
	ProdLock    ProdLock
	Open        []ReleaseOperation
}

// PromotionRequest asks to promote a component to an environment.
type PromotionRequest struct {
	Component string
	TargetEnv string
	Version   *string
}

// SourceEnv is the environment a promotion takes its version from.
func SourceEnv(target string) string {
	switch target {
	case EnvUAT:
		return EnvDev
	case EnvProd:
		return EnvUAT
	}
	return ""
}

// PlanPromotion applies the promotion rules to a project and what its source
// environment last reported, returning the version to deploy.
func PlanPromotion(p Project, r PromotionRequest, source *Deployment) (string, error) {
	if err := CheckReleasable(p); err != nil {
		return "", err
	}
	if p.Kind == ProjectVM {
		return "", Errorf(KindInvalid, CodeVMProjectsUnsupported, "project %d is a VM project; promotions apply to container-cluster projects", p.ID)
	}
	if !slices.Contains(p.Components, r.Component) {
		return "", componentNotEnabled(p, r.Component)
	}
	if r.TargetEnv == EnvDev {
		if r.Version == nil {
			return "", Invalid("version", CodeVersionRequired,
				"a dev promotion names the build's version: send version")
		}
		return *r.Version, nil
	}
	src := SourceEnv(r.TargetEnv)
	if source == nil {
		return "", Invalid("version", CodeVersionNotAtSource,
			"%s reports no version of %s to promote: promote %s to %s first",
			src, r.Component, r.Component, src)
	}
	if r.Version != nil && *r.Version != source.Version {
		return "", Invalid("version", CodeVersionNotAtSource,
			"%s runs %s, not %s: leave version out to promote %s, or promote %s to %s first",
			src, source.Version, *r.Version, source.Version, *r.Version, src)
	}
	return source.Version, nil
}

// componentNotEnabled refuses a component project p does not enable, naming
// the ones it does (promotion rule 5).
func componentNotEnabled(p Project, component string) error {
	enabled := "no component"
	if len(p.Components) > 0 {
		enabled = strings.Join(p.Components, ", ")
	}
	return Invalid("component", CodeComponentNotEnabled,
		"component %s is not enabled on project %d (it enables %s); "+
			"add it to the project's components first", component, p.ID, enabled)
}

// CheckReleasable refuses any release of a retired project (promotion rule
// 7): a new promotion, the approval of one awaiting it, and the dispatch of
// one queued before the retirement.
func CheckReleasable(p Project) error {
	if p.Status == ProjectRetired {
		return Errorf(KindConflict, CodeProjectRetired, "project %d is retired and takes no release", p.ID)
	}
	return nil
}

// RetiredBeforeDispatch is the error of a promotion that its project's
// retirement stopped before the pipeline took it.
func RetiredBeforeDispatch(projectID int64) *OperationError {
	return &OperationError{Code: CodeProjectRetired, Detail: fmt.Sprintf("project %d was retired before the "+
		"promotion was dispatched; a retired project takes no release, so it was never sent", projectID)}
}

// CheckApproval lets a person approve a promotion awaiting approval of a
// project that is not retired; a person who counts as its requester
// approves only with a note.
func CheckApproval(op ReleaseOperation, p Project, approver int64, note string) error {
	if op.Status != OpAwaitingApproval {
		return Errorf(KindConflict, CodeNotAwaitingApproval, "release operation %d is %s, not awaiting approval", op.ID, op.Status)
	}
	if err := CheckReleasable(p); err != nil {
		return err
	}
	if note == "" && slices.Contains(op.Requesters, approver) {
		return Invalid("note", CodeApprovalNoteRequired, "the requester approves their own promotion only with a note")
	}
	return nil
}

// ReleaseFilter narrows release operations; zero members do not filter.
type ReleaseFilter struct {
	Status     []string `json:"status,omitempty"`      // any of these
	TargetEnv  []string `json:"target_env,omitempty"`  // any of these
	Component  []string `json:"component,omitempty"`   // any of these
	ProjectID  int64    `json:"project_id,omitempty"`  // fleet-wide list only
	CustomerID int64    `json:"customer_id,omitempty"` // fleet-wide list only
}

// Releases stores release operations, deployments and PROD data locks.
type Releases interface {
	RequestPromotion(ctx context.Context, a Actor, requesters []int64, projectID int64, r PromotionRequest, l *Lease) (ReleaseOperation, error)
	ListReleaseOperations(ctx context.Context, projectID int64, f ReleaseFilter, q PageQuery) (Page[ReleaseOperation], error)
	// ListFleetReleaseOperations lists the release operations of every
	// project, newest first (created_at, id), narrowed by f.
	ListFleetReleaseOperations(ctx context.Context, f ReleaseFilter, q PageQuery) (
		Page[ReleaseOperation], error)
	GetReleaseOperation(ctx context.Context, id int64) (*ReleaseOperation, error)
	ReleaseState(ctx context.Context, projectID int64) (*ReleaseState, error)
	GetProdLock(ctx context.Context, projectID int64) (*ProdLock, error)
	SetProdLock(ctx context.Context, a Actor, projectID int64, locked bool, confirm *string) (ProdLock, error)
}

// ReleaseDesk is what the portal and pipelines do to releases.
type ReleaseDesk interface {
	ApproveRelease(ctx context.Context, by Actor, id int64, note string) (ReleaseOperation, error)
	RejectRelease(ctx context.Context, by Actor, id int64, reason string) (ReleaseOperation, error)
	BookDataCopy(ctx context.Context, by Actor, projectID int64, from, to string) (ReleaseOperation, error)
	DeployReporter
}

// ReleaseOperationKinds maps each operation kind a release operation is
// shown as to the release operation's own kind.
var ReleaseOperationKinds = map[string]string{OpKindReleasePromotion: ReleasePromotion,
	OpKindDataCopy: ReleaseDataCopy}

// Operation shows a promotion as the operation "release:<id>".
func (r ReleaseOperation) Operation() Operation {
	kind := OpKindReleasePromotion
	if r.Kind == ReleaseDataCopy {
		kind = OpKindDataCopy
	}
	op := Operation{ID: ReleaseOperationRef(r.ID), Kind: kind, Status: r.Status,
		Target: OperationTarget{Type: "project", ID: formatInt(r.ProjectID)}, Error: r.Error,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt}
	if r.Status == OpSucceeded && r.Version != nil {
		op.Result = map[string]any{"version": *r.Version, "target_env": r.TargetEnv}
	}
	return op
}

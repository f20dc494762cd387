package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// OperationError says why an operation failed: an RFC 9457 problem document
// in the form of the API's problems, the one error member of every
// operation-shaped answer (operations, release operations). It has no
// status and no request id: no HTTP answer carried it (docs/decisions.md).
type OperationError struct {
	Type     string `json:"type" doc:"urn:svc:api:problem:<code>"`
	Title    string `json:"title" doc:"Fixed per code: its HTTP reason phrase, else the code in words"`
	Detail   string `json:"detail" doc:"Words for people"`
	Code     string `json:"code" doc:"Stable machine code"`
	Instance string `json:"instance" example:"/api/v1/operations/release:12" doc:"The operation's path"`
}

// OperationProgress is how far a copy got.
type OperationProgress struct {
	BytesDone  int64 `json:"bytes_done"`
	BytesTotal int64 `json:"bytes_total"`
}

// OperationRetry is why a running operation waits to try its node agent
// again (resources.OperationRetry).
type OperationRetry struct {
	Attempts      int       `json:"attempts"`
	MaxAttempts   int       `json:"max_attempts" doc:"Then it fails node_agent_unreachable"`
	NextAttemptAt time.Time `json:"next_attempt_at" doc:"Not before"`
	Code          string    `json:"code" doc:"node_agent_unreachable, node_key_refused, …"`
	Reason        string    `json:"reason"`
}

// Operation is long-running work started by a 202 answer; poll it at
// GET /operations/{id} until succeeded or failed.
type Operation struct {
	ID         string                      `json:"id" example:"release:12" doc:"Decimal, or release:<id> for a release promotion or data copy"`
	Kind       string                      `json:"kind" doc:"release_promotion, data_copy, project_provision, node_cache_copy, node_cache_remove, …"`
	Status     string                      `json:"status" doc:"pending, running, succeeded, failed, awaiting_approval, awaiting_operator, …"`
	Target     resources.OperationTarget   `json:"target"`
	Error      Nullable[OperationError]    `json:"error" doc:"Why it failed, as a problem document; null otherwise"`
	Result     map[string]any              `json:"result" nullable:"true"`
	Progress   Nullable[OperationProgress] `json:"progress" doc:"Copies: bytes so far"`
	Retry      Nullable[OperationRetry]    `json:"retry" required:"false" doc:"While its node agent fails and is retried (reason: what to do); else null"`
	CreatedAt  time.Time                   `json:"created_at"`
	UpdatedAt  time.Time                   `json:"updated_at"`
	FinishedAt *time.Time                  `json:"finished_at" nullable:"true"`
}

func operationView(op resources.Operation) Operation {
	v := Operation{ID: op.ID, Kind: op.Kind, Status: op.Status, Target: op.Target, Result: op.Result,
		CreatedAt: op.CreatedAt.UTC(), UpdatedAt: op.UpdatedAt.UTC(), FinishedAt: utcPtr(op.FinishedAt)}
	v.Error = operationErrorView(op.Error, op.ID)
	v.Progress = NullOf[OperationProgress](nil)
	if p := op.Progress; p != nil {
		v.Progress = NullOf(&OperationProgress{BytesDone: p.BytesDone, BytesTotal: p.BytesTotal})
	}
	v.Retry = NullOf[OperationRetry](nil)
	if r := op.Retry; r != nil {
		v.Retry = NullOf(&OperationRetry{Attempts: r.Attempts, MaxAttempts: r.MaxAttempts,
			NextAttemptAt: r.NextAttemptAt.UTC(), Code: r.Code, Reason: r.Reason})
	}
	return v
}

// AcceptedOutput is a 202 answer: the operation and where to poll it.
type AcceptedOutput struct {
	Location string `header:"Location" doc:"/api/v1/operations/{id}"`
	Body     Operation
}

func accepted(op resources.Operation) *AcceptedOutput {
	return &AcceptedOutput{Location: Prefix + "/operations/" + op.ID, Body: operationView(op)}
}

// OperationIDInput names one operation.
type OperationIDInput struct {
	OperationID string `path:"operation_id" pattern:"^([1-9][0-9]{0,17}|release:[1-9][0-9]{0,8})$" doc:"Operation id"`
}

// OperationOutput is one operation.
type OperationOutput struct{ Body Operation }

var operationReaders = []string{resources.PermProjectsRead, resources.PermProjectsWrite, resources.PermReleasesRead,
	resources.PermReleasesWrite, resources.PermAIRead, resources.PermAIWrite}

// operationKeys are the permission keys of which any one lets a caller poll
// an operation of the kind at GET /operations/{id}, and so see it in GET
// /operations: a release operation (promotion or data copy, "release:<id>")
// needs what GET /release-operations/{id} needs, any other kind what
// get-operation declares.
func operationKeys(kind string) []string {
	if _, release := resources.ReleaseOperationKinds[kind]; release {
		return releasesRead
	}
	return operationReaders
}

func (s *Server) registerOperationsAPI() {
	s.registerListOperations()
	Register(s.api, Op{ID: "get-operation", Toolset: ToolsetProjects, Method: http.MethodGet, Path: "/operations/{operation_id}", Tags: []string{"Operations"},
		Summary: "Poll an operation", Permissions: operationReaders, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Long-running work a 202 answer started; poll until succeeded or failed (progress: a " +
			"copy's bytes). release:<id> needs a releases read key.",
		Notes: "poll long-running work (`release:<id>` for promotions) until `succeeded` or " +
			"`failed`",
	}, func(ctx context.Context, in *OperationIDInput) (*OperationOutput, error) {
		op, err := s.operation(ctx, in.OperationID)
		if err != nil {
			return nil, err
		}
		return &OperationOutput{Body: operationView(*op)}, nil
	})
}

// operation reads an operation; "release:<id>" is the release operation
// itself, so an unknown one answers release_operation_not_found exactly as
// GET /release-operations/{id} does.
func (s *Server) operation(ctx context.Context, id string) (*resources.Operation, error) {
	rid, ok := resources.ReleaseOperationID(id)
	if !ok {
		return s.svc.Operations.GetOperation(ctx, id)
	}
	// Both kinds a release operation can be need the same keys: those of
	// GET /release-operations/{id}.
	keys := operationKeys(resources.OpKindReleasePromotion)
	if err := permitted(CredentialFrom(ctx), keys); err != nil {
		return nil, err
	}
	r, err := s.svc.Releases.GetReleaseOperation(ctx, rid)
	if err != nil {
		return nil, err
	}
	op := r.Operation()
	return &op, nil
}

// operationErrorView is the error of operation id (as GET /operations/{id}
// names it) as a problem document, or null.
func operationErrorView(e *resources.OperationError, id string) Nullable[OperationError] {
	if e == nil {
		return NullOf[OperationError](nil)
	}
	return NullOf(&OperationError{Type: ProblemTypePrefix + e.Code, Title: resources.ProblemTitle(e.Code),
		Detail: e.Detail, Code: e.Code, Instance: Prefix + "/operations/" + id})
}

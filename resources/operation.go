package resources

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Operation statuses (operations and release operations).
const (
	OpPending          = "pending"
	OpRunning          = "running"
	OpSucceeded        = "succeeded"
	OpFailed           = "failed"
	OpAwaitingApproval = "awaiting_approval"
	OpAwaitingOperator = "awaiting_operator"
)

// Operation kinds.
const (
	OpKindReleasePromotion = "release_promotion"
	OpKindProjectProvision = "project_provision"
	OpKindNodeCacheCopy    = "node_cache_copy"
	OpKindNodeCacheRemove  = "node_cache_remove"
	OpKindDataCopy         = "data_copy"
	releaseOpPrefix        = "release:"
)

// OperationKinds lists every operation kind, in the order the API documents
// them.
var OperationKinds = []string{OpKindReleasePromotion, OpKindDataCopy, OpKindProjectProvision,
	OpKindNodeCacheCopy, OpKindNodeCacheRemove}

// CodeOperationNotFound is the 404 code of an unknown operation id.
const CodeOperationNotFound = "operation_not_found"

// OperationTarget names what an operation works on.
type OperationTarget struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// OperationError is why an operation failed.
type OperationError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// OperationProgress is how far a running copy got, as its node agent
// reports it.
type OperationProgress struct {
	BytesDone  int64 `json:"bytes_done"`
	BytesTotal int64 `json:"bytes_total"`
}

// OperationRetry says why a running operation waits to try again: the
// node agent it drives did not answer (or refused the node key) on its
// latest Attempts tries in a row; after MaxAttempts such tries it fails
// node_agent_unreachable. Code is CodeNodeAgentUnreachable or
// CodeNodeKeyRefused; Reason says, for an operator, what happened and
// what to do. It never holds a node key.
type OperationRetry struct {
	Attempts      int       `json:"attempts"`
	MaxAttempts   int       `json:"max_attempts"`
	NextAttemptAt time.Time `json:"next_attempt_at"` // the next try is not before
	Code          string    `json:"code"`
	Reason        string    `json:"reason"`
}

// Operation is long-running work a 202 answer started; callers poll it until
// it succeeded or failed.
type Operation struct {
	ID         string // decimal, or "release:<id>" for a release promotion
	Kind       string
	Status     string
	Target     OperationTarget
	Error      *OperationError
	Result     map[string]any
	Progress   *OperationProgress // nil: the operation reports none
	Retry      *OperationRetry    // nil: not waiting to try again
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// Finished reports whether the status is final.
func Finished(status string) bool { return status == OpSucceeded || status == OpFailed }

// ReleaseOperationID parses "release:<id>"; ok is false for other ids.
func ReleaseOperationID(opID string) (int64, bool) {
	rest, ok := strings.CutPrefix(opID, releaseOpPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

// ReleaseOperationRef spells a release operation as an operation id.
func ReleaseOperationRef(id int64) string { return releaseOpPrefix + strconv.FormatInt(id, 10) }

// OperationFilter narrows the list of operations of every kind; zero
// members do not filter, but Kinds always does.
type OperationFilter struct {
	// Kinds are the kinds to list (those the caller may see, narrowed by
	// the kind it asked for); none lists nothing.
	Kinds      []string
	Status     []string // any of these
	TargetType []string // any of these
	TargetID   string
	Since      *time.Time // created at or after
}

// Operations reads operations of every kind.
type Operations interface {
	GetOperation(ctx context.Context, id string) (*Operation, error)
	// ListOperations lists operations of every kind (release operations as
	// "release:<id>" among them), newest first: by created_at, then release
	// operations before the others, then id; each page key is
	// [created_at, operation id].
	ListOperations(ctx context.Context, f OperationFilter, q PageQuery) (Page[Operation], error)
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

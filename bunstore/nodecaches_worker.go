package bunstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"platformapi/resources"
)

// cacheCopyArgs is the job that copies a model's weights onto a node.
type cacheCopyArgs struct {
	OperationID int64 `json:"operation_id"`
}

// Kind names the job kind.
func (cacheCopyArgs) Kind() string { return resources.OpKindNodeCacheCopy }

// cacheRemoveArgs is the job that removes a model's weights from a node;
// From is the cache's status before (restored should the removal fail).
type cacheRemoveArgs struct {
	OperationID int64  `json:"operation_id"`
	From        string `json:"from,omitempty"`
}

// Kind names the job kind.
func (cacheRemoveArgs) Kind() string { return resources.OpKindNodeCacheRemove }

// cacheJob is the job that runs a node cache operation of kind.
func cacheJob(kind string, opID int64, from string) river.JobArgs {
	if kind == resources.OpKindNodeCacheRemove {
		return cacheRemoveArgs{OperationID: opID, From: from}
	}
	return cacheCopyArgs{OperationID: opID}
}

// AgentPolicy says how the cache jobs drive node agents; zero values take
// the defaults.
type AgentPolicy struct {
	Poll     time.Duration // between two looks at a running copy; 0: 1 s
	Watch    time.Duration // longest one job attempt watches a copy before it snoozes; 0: 1 min
	Backoff  time.Duration // first wait after the agent was unreachable, doubled up to a minute; 0: 1 s
	Attempts int           // tries while the agent stays unreachable, then the operation fails; 0: 12
}

func (p AgentPolicy) poll() time.Duration  { return cmpOr(p.Poll, time.Second) }
func (p AgentPolicy) watch() time.Duration { return cmpOr(p.Watch, time.Minute) }

func (p AgentPolicy) attempts() int {
	if p.Attempts > 0 {
		return p.Attempts
	}
	return 12
}

// nextRetry waits Backoff after the first unreachable try, twice that
// after the second, and so on up to a minute.
func (p AgentPolicy) nextRetry(errs []rivertype.AttemptError) time.Time {
	return time.Now().Add(p.wait(unreachableTries(errs)))
}

// wait is how long River waits after a try that follows tries unreachable
// ones in a row.
func (p AgentPolicy) wait(tries int) time.Duration {
	wait := cmpOr(p.Backoff, time.Second)
	for range min(tries, 16) {
		wait = min(2*wait, time.Minute)
	}
	return wait
}

// retryOf is what an operation shows while River waits to try its agent
// again after err: the tries in a row so far (this one included), when
// the next is due (as nextRetry computes it; River's scheduler may start
// it a little later) and why.
func (p AgentPolicy) retryOf(err error, errs []rivertype.AttemptError) resources.OperationRetry {
	tries := unreachableTries(errs)
	r := resources.OperationRetry{Attempts: tries + 1, MaxAttempts: p.attempts(),
		NextAttemptAt: time.Now().Add(p.wait(tries)).UTC(), Code: resources.CodeNodeAgentUnreachable,
		Reason: err.Error()}
	var ue *resources.AgentUnreachableError
	if errors.As(err, &ue) {
		r.Code, r.Reason = ue.Retry()
	}
	return r
}

// retryAgent answers the error that makes River try a cache job again; when
// the agent was unreachable (or refused the node key) the operation
// records it first (OperationRetry). A failure to record it is added to
// the error, whose text still counts as an unreachable try.
func (s *Store) retryAgent(ctx context.Context, opID int64, err error, errs []rivertype.AttemptError,
	p AgentPolicy) error {
	if !errors.Is(err, resources.ErrNodeAgentUnreachable) {
		return err
	}
	if rerr := s.setRetry(ctx, opID, p.retryOf(err, errs)); rerr != nil {
		return fmt.Errorf("%w (%v)", err, rerr)
	}
	return err
}

// unreachableTries counts the job's latest attempts in a row that failed
// because the node agent could not be reached.
func unreachableTries(errs []rivertype.AttemptError) int {
	n := 0
	for i := len(errs) - 1; i >= 0 && strings.Contains(errs[i].Error, resources.ErrNodeAgentUnreachable.Error()); i-- {
		n++
	}
	return n
}

// agentOutcome turns an agent's failure into what the job does next: nil
// opErr with err retries the job (River waits nextRetry); an opErr ends the
// operation as failed. Unreachable agents are retried until the policy's
// attempts are spent.
func agentOutcome(err error, errs []rivertype.AttemptError, p AgentPolicy) (*resources.OperationError, error) {
	switch e, ok := resources.AsError(err); {
	case errors.Is(err, resources.ErrNodeAgentUnreachable):
		if unreachableTries(errs)+1 < p.attempts() {
			return nil, err
		}
		return &resources.OperationError{Code: resources.CodeNodeAgentUnreachable,
			Detail: fmt.Sprintf("%d tries failed; the last: %s", p.attempts(), p.retryOf(err, errs).Reason)}, nil
	case ok:
		return agentError(e.Code, e.Detail), nil
	default:
		return nil, err
	}
}

// agentError is the operation error of an agent's refusal: its own code
// when the catalogue knows it, else node_agent_refused.
func agentError(code, detail string) *resources.OperationError {
	switch code {
	case resources.CodeChecksumMismatch, resources.CodeInsufficientDisk, resources.CodeCentralCopyInvalid,
		resources.CodeNodeAgentNotEnrolled:
		return &resources.OperationError{Code: code, Detail: detail}
	}
	return &resources.OperationError{Code: resources.CodeNodeAgentRefused, Detail: code + ": " + detail}
}

// cacheTask is what a cache job drives the agent with.
type cacheTask struct {
	hostname string
	repo     string
	source   string // the central copy, relative to the agent's store root (copies only)
	progress resources.OperationProgress
	retrying bool // the operation shows a retry, which the agent's next answer clears
}

// cacheWork is what a cache job works on, locked: its operation, the cache
// (nil when there is none) and the model.
type cacheWork struct {
	op       *operationRow
	hostname string
	cache    *nodeCacheRow
	model    *cacheModelRow
}

// lockCacheWork locks a cache operation, its model and its cache; nil when
// the operation already finished (a retried job).
func lockCacheWork(ctx context.Context, tx bun.Tx, opID int64) (*cacheWork, error) {
	op, err := lockOperation(ctx, tx, opID)
	if err != nil || resources.Finished(op.Status) {
		return nil, err
	}
	cw := &cacheWork{op: op}
	var id string
	cw.hostname, id, _ = strings.Cut(op.TargetID, "/")
	if cw.model, err = cacheModel(ctx, tx, parseKeyOrZero(id), "UPDATE"); err != nil {
		return nil, err
	}
	cw.cache, err = cacheByKey(ctx, tx, cw.hostname, cw.model.ID)
	return cw, err
}

// markRunning turns a pending cache operation running.
func markRunning(ctx context.Context, tx bun.Tx, op *operationRow) error {
	if op.Status != resources.OpPending {
		return nil
	}
	op.Status = resources.OpRunning
	return updateRow(ctx, tx, op)
}

// sleepCtx waits d, or less when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

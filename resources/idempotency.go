package resources

import (
	"context"
	"encoding/json"
	"time"
)

// Idempotency rules: keys live at least this long; a running request holds
// its key for at most LeaseTTL before a retry may take over.
const (
	IdempotencyWindow   = 24 * time.Hour
	IdempotencyLeaseTTL = time.Minute
	// IdempotencyRetryAfter is the Retry-After of a request whose key is
	// held by one still running: keyed requests end in milliseconds, and
	// the lease's remaining time matters only after a crash.
	IdempotencyRetryAfter = time.Second
	RecoveryStarted       = "started"
)

// Idempotency problem codes.
const (
	CodeInvalidIdempotencyKey = "invalid_idempotency_key"
	CodeIdempotencyKeyReused  = "idempotency_key_reused"
	CodeIdempotencyInProgress = "idempotency_request_in_progress"
	CodeIdempotencyLeaseLost  = "idempotency_lease_lost"
)

// IdempotencyRequest identifies one keyed request.
type IdempotencyRequest struct {
	Account     string // the calling account ("user:1", "service_account:2"), never the token
	Key         string
	Fingerprint []byte // hash of method, path, query and canonical body
}

// StoredResponse is an answer kept for replay.
type StoredResponse struct {
	Status int
	Header map[string][]string
	Body   []byte
}

// Lease is the right to run a keyed request, with the recovery point an
// earlier attempt reached (RecoveryStarted when none).
type Lease struct {
	ID            int64
	Token         string
	RecoveryPoint string
	RecoveryData  json.RawMessage
	// Answer, when the HTTP layer sets it, renders the answer the request
	// gives once its business transaction commits with result, so the store
	// keeps that answer in the same transaction as the recovery point (ok
	// false: it keeps the recovery point only, and the answer is stored
	// after the request).
	Answer func(result any) (answer StoredResponse, ok bool)
	// Stored is the answer the store kept in the business transaction; nil
	// when it kept none. The HTTP layer stores its actual answer only when it
	// differs.
	Stored *StoredResponse
	// AtCommit, when set, means the key is not claimed yet: the business
	// transaction inserts it (with the lease, the recovery point and the
	// answer) as its last write and sets ID, or fails with
	// idempotency_request_in_progress when the key is there already
	// (rolling the change back).
	AtCommit *IdempotencyRequest
}

// Resumed reports whether an earlier attempt passed the named point.
func (l *Lease) Resumed(point string) bool { return l != nil && l.RecoveryPoint == point }

// Begun is the outcome of starting a keyed request: exactly one of Replay
// (the stored answer) or Lease (go ahead) is set.
type Begun struct {
	Replay *StoredResponse
	Lease  *Lease
}

// Idempotency keeps keyed requests. Begin refuses with *Error
// idempotency_key_reused (another request used the key) or
// idempotency_request_in_progress (with RetryAfter).
type Idempotency interface {
	Begin(ctx context.Context, r IdempotencyRequest) (Begun, error)
	Finish(ctx context.Context, l *Lease, res StoredResponse) error
	Release(ctx context.Context, l *Lease) error
	DeleteExpired(ctx context.Context) (int64, error)
}

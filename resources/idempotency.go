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
	// Request is the keyed request whose key this lease writes: while ID is
	// 0 (not written yet), the change's first recovery point inserts the key
	// with the lease and sets ID, or fails with
	// idempotency_request_in_progress when the key is there already
	// (rolling the change back).
	Request *IdempotencyRequest
}

// Resumed reports whether an earlier attempt passed the named point.
func (l *Lease) Resumed(point string) bool { return l != nil && l.RecoveryPoint == point }

// Begun is the outcome of starting a keyed request: exactly one of Replay
// (the stored answer) or Lease (go ahead) is set.
type Begun struct {
	Replay *StoredResponse
	Lease  *Lease
}

// Idempotency keeps keyed requests. It is the one protocol of every
// operation that accepts an Idempotency-Key:
//
//  1. The request runs first, with a Lease that has no ID. The change's
//     transaction writes the key through it as its last write (lease,
//     recovery point and, when the HTTP layer renders one, the answer); if
//     the key is there already it rolls back with
//     idempotency_request_in_progress. A keyed change thus costs no round
//     trip more than an unkeyed one.
//  2. When the run did not write the key (the key was there, or it was
//     refused before any change), nothing of it is kept or sent, and Begin
//     claims the key: an answered key is replayed byte for byte; one used
//     for another request (its fingerprint differs) is 409
//     idempotency_key_reused; one whose request holds a live lease is 429
//     idempotency_request_in_progress with RetryAfter; one older than
//     IdempotencyWindow is free again. Otherwise the request runs again
//     with the claimed Lease, resuming from the recovery point an earlier
//     attempt reached.
//  3. Every later recovery point goes through the lease inside its change's
//     transaction; a lost lease rolls the change back with
//     idempotency_lease_lost, so key and change never disagree.
//  4. Finish stores an answer below 500 for replay (unless the transaction
//     kept that very answer); after a 5xx, Release frees the key and keeps
//     the recovery point, so a retry resumes there.
type Idempotency interface {
	Begin(ctx context.Context, r IdempotencyRequest) (Begun, error)
	Finish(ctx context.Context, l *Lease, res StoredResponse) error
	Release(ctx context.Context, l *Lease) error
	DeleteExpired(ctx context.Context) (int64, error)
}

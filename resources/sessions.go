package resources

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"
)

// Lifetimes of a portal session (docs/decisions.md, Portal): a session
// unused for SessionIdleLifetime, or older than SessionAbsoluteLifetime,
// is over.
const (
	SessionIdleLifetime     = 8 * time.Hour
	SessionAbsoluteLifetime = 7 * 24 * time.Hour
)

// ErrSessionEnded refuses a session id that is unknown, expired, signed
// out or whose person is no longer active. Only the portal's pages see it
// (never an API client), so it is no problem code.
var ErrSessionEnded = errors.New("the session has ended; sign in again")

// Session is a signed-in person's portal session.
type Session struct {
	UserID      int64
	Email       string
	DisplayName string
	CreatedAt   time.Time
	LastSeenAt  time.Time
	Permissions []string // the keys the person holds now, read with the session
}

// SessionID is a session's secret as the browser holds it; the store keeps
// only its hash.
type SessionID string

// NewSessionID makes a fresh random session id (256 bits).
func NewSessionID() SessionID {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return SessionID(base64.RawURLEncoding.EncodeToString(b))
}

// Hash is the SHA-256 of the id, the only form the store keeps.
func (id SessionID) Hash() []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// Sessions keeps portal sessions. Each method runs in one transaction.
type Sessions interface {
	// StartSession signs in the person with the verified e-mail: an active
	// person gets a new session under id (the session under previous, if
	// any, ends), audited as session.sign_in by a (its Label and UserID are
	// filled in). Unknown or deactivated: 403 forbidden, nothing created.
	StartSession(ctx context.Context, a Actor, email string, id, previous SessionID) (Session, error)
	// Session returns the live session under id and records its use; a
	// session past a lifetime or whose person is not active is deleted and
	// refused with ErrSessionEnded.
	Session(ctx context.Context, id SessionID) (Session, error)
	// EndSession deletes the session under id, audited as session.sign_out
	// (a is filled in with its person); an unknown id changes nothing.
	EndSession(ctx context.Context, a Actor, id SessionID) error
}

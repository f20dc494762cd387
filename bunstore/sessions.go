package bunstore

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// sessionRow is a portal session with its person.
type sessionRow struct {
	UserID      int64     `bun:"user_id"`
	Email       string    `bun:"email"`
	DisplayName string    `bun:"display_name"`
	Status      string    `bun:"status"`
	CreatedAt   time.Time `bun:"created_at"`
	LastSeenAt  time.Time `bun:"last_seen_at"`
	Permissions []string  `bun:"permissions,array"`
}

func (r sessionRow) session() resources.Session {
	return resources.Session{UserID: r.UserID, Email: r.Email, DisplayName: r.DisplayName,
		CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt, Permissions: resources.CanonicalKeys(r.Permissions)}
}

var errNoActivePerson = resources.Errorf(resources.KindForbidden, resources.CodeSignInRequired,
	"no active person has this e-mail address")

// StartSession signs the person with the verified e-mail in (see
// resources.Sessions).
func (s *Store) StartSession(ctx context.Context, a resources.Actor, email string,
	id, previous resources.SessionID) (resources.Session, error) {
	var out resources.Session
	now := s.now()
	err := s.inTx(ctx, func(tx bun.Tx) error {
		p, err := personByEmail(ctx, tx, email)
		if e, ok := resources.AsError(err); ok && e.Code == resources.CodeUserNotFound {
			return errNoActivePerson
		}
		if err != nil {
			return err
		}
		if p.Status != resources.UserActive {
			return errNoActivePerson
		}
		if previous != "" {
			if _, err := tx.NewRaw("DELETE FROM portal_sessions WHERE id_hash = ?", previous.Hash()).
				Exec(ctx); err != nil {
				return err
			}
		}
		if _, err := tx.NewRaw(`INSERT INTO portal_sessions (id_hash, user_id, created_at, last_seen_at)
			VALUES (?, ?, ?, ?)`, id.Hash(), p.ID, now, now).Exec(ctx); err != nil {
			return err
		}
		out = resources.Session{UserID: p.ID, Email: p.Email, DisplayName: p.DisplayName,
			CreatedAt: now, LastSeenAt: now}
		return s.writeAudit(ctx, tx, sessionAudit(a, p.ID, p.Email, "session.sign_in"))
	})
	if err != nil {
		return resources.Session{}, err
	}
	return out, nil
}

// sessionAudit is the audit entry of a sign-in or sign-out of person id.
func sessionAudit(a resources.Actor, id int64, email, action string) auditEntry {
	a.Label, a.UserID, a.AuthKind = email, &id, resources.AuthKindSession
	return auditEntry{actor: a, action: action, entityType: "user", entityID: idString(id)}
}

// Session returns the live session under id, recording its use (see
// resources.Sessions).
func (s *Store) Session(ctx context.Context, id resources.SessionID) (resources.Session, error) {
	var out resources.Session
	now, ended := s.now(), false
	err := s.inTx(ctx, func(tx bun.Tx) error {
		var r sessionRow
		err := tx.NewRaw(`SELECT s.user_id, s.created_at, s.last_seen_at, u.email, u.display_name, u.status,
			`+permissionsOf+` AS permissions
			FROM portal_sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = ? FOR UPDATE OF s`,
			id.Hash()).Scan(ctx, &r)
		if noRows(err) {
			ended = true
			return nil
		}
		if err != nil {
			return err
		}
		if r.Status != resources.UserActive || !sessionLive(r, now) {
			ended = true // the deletion is committed, the refusal follows
			_, err := tx.NewRaw("DELETE FROM portal_sessions WHERE id_hash = ?", id.Hash()).Exec(ctx)
			return err
		}
		r.LastSeenAt = now
		out = r.session()
		_, err = tx.NewRaw("UPDATE portal_sessions SET last_seen_at = ? WHERE id_hash = ?", now, id.Hash()).
			Exec(ctx)
		return err
	})
	if err == nil && ended {
		err = resources.ErrSessionEnded
	}
	if err != nil {
		return resources.Session{}, err
	}
	return out, nil
}

// sessionLive reports whether a session is within both lifetimes at now.
func sessionLive(r sessionRow, now time.Time) bool {
	return now.Before(r.LastSeenAt.Add(resources.SessionIdleLifetime)) &&
		now.Before(r.CreatedAt.Add(resources.SessionAbsoluteLifetime))
}

// EndSession signs the session under id out (see resources.Sessions).
func (s *Store) EndSession(ctx context.Context, a resources.Actor, id resources.SessionID) error {
	return s.inTx(ctx, func(tx bun.Tx) error {
		var r sessionRow
		err := tx.NewRaw(`DELETE FROM portal_sessions s USING users u WHERE s.id_hash = ? AND u.id = s.user_id
			RETURNING s.user_id, u.email`, id.Hash()).Scan(ctx, &r)
		if noRows(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.writeAudit(ctx, tx, sessionAudit(a, r.UserID, r.Email, "session.sign_out"))
	})
}

// DeleteEndedSessions deletes the sessions past a lifetime or whose person
// is not active (such a session is refused when presented anyway; this
// removes the ones never presented again) and returns how many.
func (s *Store) DeleteEndedSessions(ctx context.Context) (int64, error) {
	now := s.now()
	res, err := s.db.NewRaw(`DELETE FROM portal_sessions s USING users u WHERE u.id = s.user_id
		AND (u.status <> 'active' OR s.last_seen_at <= ? OR s.created_at <= ?)`,
		now.Add(-resources.SessionIdleLifetime), now.Add(-resources.SessionAbsoluteLifetime)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete ended portal sessions: %w", err)
	}
	return res.RowsAffected()
}

// endSessionsOf deletes every portal session of person id (deactivation).
func endSessionsOf(ctx context.Context, tx bun.IDB, id int64) error {
	_, err := tx.NewRaw("DELETE FROM portal_sessions WHERE user_id = ?", id).Exec(ctx)
	return err
}

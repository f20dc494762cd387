-- Sessions of the people's portal (issue 20): the browser holds a random
-- session id; only its SHA-256 is stored. A session ends on sign-out, after
-- its idle or absolute lifetime, and with its person's deactivation (the
-- same transaction deletes it; every request also re-checks the person).
CREATE TABLE portal_sessions (
    id_hash      bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    user_id      bigint NOT NULL REFERENCES users (id),
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);

-- Idempotency keys: one row per (calling account, key), holding the request's
-- fingerprint, a lease while it runs, the recovery point its business
-- transaction reached, and the stored answer once it finished below 500.
CREATE TABLE idempotency_keys (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account         text NOT NULL,
    key             text NOT NULL CHECK (key ~ '^[!-~]{1,255}$'),
    fingerprint     bytea NOT NULL,
    created_at      timestamptz NOT NULL,
    lease           text,
    locked_until    timestamptz,
    recovery_point  text NOT NULL DEFAULT 'started',
    recovery_data   jsonb,
    response_status integer,
    response_header jsonb,
    response_body   bytea,
    finished_at     timestamptz,
    UNIQUE (account, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

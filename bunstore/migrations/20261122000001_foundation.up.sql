-- Foundation: platform settings, server keys, people, roles, service accounts,
-- API tokens and the audit log.

CREATE TABLE platform_settings (
    id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    api_enabled boolean NOT NULL DEFAULT false,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO platform_settings DEFAULT VALUES;

-- Random keys the server generates once and shares across replicas
-- (for example the key that authenticates list cursors).
CREATE TABLE server_keys (
    name       text PRIMARY KEY,
    value      bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE roles (
    name        text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{1,39}$'),
    description text NOT NULL DEFAULT '',
    permissions text[] NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO roles (name, description, permissions) VALUES
    ('admin', 'Installation administrator: every permission.', ARRAY[
        'admin',
        'tenancy-read-global', 'tenancy-write-global',
        'users-read-global', 'users-write-global',
        'projects-read-global', 'projects-write-global',
        'releases-read-global', 'releases-write-global',
        'ai-read-global', 'ai-write-global', 'ai-gateway-keys-global',
        'audit-read-global',
        'licence-read-global', 'licence-admin-global',
        'brand-read-global', 'brand-write-global',
        'api-tokens-read-global', 'api-tokens-admin-global'
    ]);

CREATE TABLE users (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email          text NOT NULL,
    display_name   text NOT NULL,
    status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    deactivated_at timestamptz
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE user_roles (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role    text NOT NULL REFERENCES roles (name) ON UPDATE CASCADE,
    PRIMARY KEY (user_id, role)
);

CREATE TABLE service_accounts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (name ~ '^[a-z][a-z0-9-]{1,62}$'),
    description text NOT NULL DEFAULT '',
    permissions text[] NOT NULL DEFAULT '{}',
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    created_by  bigint NOT NULL REFERENCES users (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind               text NOT NULL CHECK (kind IN ('pat', 'sat')),
    name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
    user_id            bigint REFERENCES users (id),
    service_account_id bigint REFERENCES service_accounts (id),
    minted_by          bigint NOT NULL REFERENCES users (id),
    token_hash         bytea NOT NULL UNIQUE,
    scopes             text[] NOT NULL DEFAULT '{}',
    allow_destroy      boolean NOT NULL DEFAULT false,
    allowed_ips        cidr[] NOT NULL DEFAULT '{}',
    expires_at         timestamptz NOT NULL,
    revoked_at         timestamptz,
    revoked_by         text,
    last_used_at       timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'pat') = (user_id IS NOT NULL)),
    CHECK ((kind = 'sat') = (service_account_id IS NOT NULL))
);
CREATE INDEX api_tokens_user ON api_tokens (user_id, id);
CREATE INDEX api_tokens_service_account ON api_tokens (service_account_id, id);

CREATE TABLE audit_events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor        text NOT NULL,
    action       text NOT NULL,
    entity_type  text NOT NULL,
    entity_id    text,
    auth_kind    text CHECK (auth_kind IN ('session', 'pat', 'service_account')),
    token_id     text,
    request_id   text,
    source_ip    text,
    before_state jsonb,
    after_state  jsonb
);
CREATE INDEX audit_events_newest ON audit_events (occurred_at DESC, id DESC);
CREATE INDEX audit_events_entity ON audit_events (entity_type, entity_id, occurred_at DESC, id DESC);
CREATE INDEX audit_events_actor ON audit_events (actor, occurred_at DESC, id DESC);
CREATE INDEX audit_events_action ON audit_events (action, occurred_at DESC, id DESC);

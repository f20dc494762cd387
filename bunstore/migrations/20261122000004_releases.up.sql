-- Projects get their full record; long-running operations; release
-- operations (promotions and data copies), reported deployments and the
-- PROD data lock. (The projects table is empty until this migration: no
-- operation could create one before.)

ALTER TABLE projects
    ADD COLUMN short_name text NOT NULL CHECK (short_name ~ '^[A-Z][A-Z0-9]{1,15}$'),
    ADD COLUMN name       text NOT NULL CHECK (char_length(name) BETWEEN 3 AND 80),
    ADD COLUMN kind       text NOT NULL CHECK (kind IN ('cluster', 'vm')),
    ADD COLUMN components text[] NOT NULL DEFAULT '{}'
        CHECK (components <@ ARRAY['app-api', 'www']::text[]),
    ADD COLUMN domain     text CHECK (char_length(domain) BETWEEN 3 AND 253),
    ADD COLUMN platform   boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT projects_short_name_key UNIQUE (short_name),
    ADD CONSTRAINT projects_domain_key UNIQUE (domain);

CREATE TABLE operations (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL,
    status      text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed',
                                                'awaiting_approval', 'awaiting_operator')),
    target_type text NOT NULL,
    target_id   text NOT NULL,
    error       jsonb,
    result      jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

CREATE TABLE release_operations (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id    bigint NOT NULL REFERENCES projects (id),
    kind          text NOT NULL CHECK (kind IN ('promotion', 'data_copy')),
    component     text CHECK (component IN ('app-api', 'www')),
    source_env    text CHECK (source_env IN ('sandbox', 'dev', 'uat', 'prod')),
    target_env    text NOT NULL CHECK (target_env IN ('sandbox', 'dev', 'uat', 'prod')),
    version       text,
    status        text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed',
                                                  'awaiting_approval', 'awaiting_operator')),
    requested_by  text NOT NULL,
    requested_via text NOT NULL CHECK (requested_via IN ('api', 'portal')),
    requesters    bigint[] NOT NULL DEFAULT '{}',
    decision      jsonb,
    error         jsonb,
    dispatched_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    CHECK ((kind = 'promotion') = (component IS NOT NULL))
);
CREATE INDEX release_operations_project ON release_operations (project_id, created_at DESC, id DESC);

CREATE TABLE deployments (
    project_id  bigint NOT NULL REFERENCES projects (id),
    env         text NOT NULL CHECK (env IN ('sandbox', 'dev', 'uat', 'prod')),
    component   text NOT NULL CHECK (component IN ('app-api', 'www')),
    version     text NOT NULL,
    reported_at timestamptz NOT NULL,
    reported_by text NOT NULL,
    PRIMARY KEY (project_id, env, component)
);

CREATE TABLE prod_locks (
    project_id bigint PRIMARY KEY REFERENCES projects (id),
    locked     boolean NOT NULL,
    changed_at timestamptz NOT NULL,
    changed_by text NOT NULL
);

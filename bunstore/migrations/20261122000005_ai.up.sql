-- The private AI area: the model catalogue, the AI node roster (from the
-- hardware inventory), node caches (weights copied onto a node's disk) and
-- AI gateway keys (stored hashed).

CREATE TABLE ai_models (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo           text NOT NULL CHECK (char_length(repo) <= 96
                       AND repo ~ '^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$'
                       AND position('..' IN repo) = 0),
    display_name   text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 255),
    gated          boolean NOT NULL DEFAULT false,
    status         text NOT NULL DEFAULT 'planned',
    location       text,
    offline_ready  boolean NOT NULL DEFAULT false,
    nas_volume     text,
    nas_path       text,
    cluster_recipe text,
    architecture   text,
    benchmarks     jsonb,
    category       text,
    context_window text,
    description    text,
    frontier_equiv text,
    gateway_tier   text,
    license        text,
    min_target     text,
    model_card_url text,
    notes          text,
    org            text,
    param_count_b  double precision CHECK (param_count_b BETWEEN 0 AND 9999999),
    params         text,
    published      text,
    quant          text,
    serving_node   text,
    size_gb        double precision CHECK (size_gb BETWEEN 0 AND 99999999),
    strong_axis    text,
    summary        text,
    vendor         text,
    vendor_country text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ai_models_repo_key UNIQUE (repo)
);
CREATE INDEX ai_models_params ON ai_models (param_count_b, id);
CREATE INDEX ai_models_size ON ai_models (size_gb, id);

CREATE TABLE ai_nodes (
    hostname      text PRIMARY KEY CHECK (hostname ~ '^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$'),
    is_virtual    boolean NOT NULL DEFAULT false,
    gpu_class     text,
    mgmt_ip       text,
    site          text,
    specs_summary text,
    parent_host   text,
    vmid          integer,
    services      text[] NOT NULL DEFAULT '{}',
    imported_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE node_caches (
    hostname   text NOT NULL REFERENCES ai_nodes (hostname),
    model_id   bigint NOT NULL REFERENCES ai_models (id),
    status     text NOT NULL CHECK (status IN ('copying', 'ready', 'removing')),
    path       text,
    size_gb    double precision,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (hostname, model_id)
);
CREATE INDEX node_caches_model ON node_caches (model_id);

CREATE TABLE ai_gateway_keys (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
    tier       text,
    key_hash   bytea NOT NULL UNIQUE,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    rotated_at timestamptz,
    revoked_at timestamptz
);

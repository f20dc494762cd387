-- Customers, their tenants, and the projects table the customer archive
-- counts (projects gain their remaining columns with the projects issue).

CREATE TABLE customers (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    short_name            text NOT NULL CHECK (short_name ~ '^[A-Z][A-Z0-9]{1,15}$'),
    long_name             text NOT NULL CHECK (char_length(long_name) BETWEEN 3 AND 80),
    vcs_group             text NOT NULL CHECK (vcs_group ~ '^[a-z][a-z0-9-]{1,29}$'),
    primary_contact_email text NOT NULL,
    primary_contact_name  text NOT NULL CHECK (char_length(primary_contact_name) BETWEEN 2 AND 80),
    billing_tier          text NOT NULL CHECK (billing_tier IN ('INTERNAL', 'PAYING')),
    customer_index        integer NOT NULL CHECK (customer_index BETWEEN 1 AND 999),
    default_email_tier    integer NOT NULL CHECK (default_email_tier IN (1, 2, 3)),
    edition               text NOT NULL CHECK (edition IN ('sp', 'enterprise')),
    notes                 text CHECK (char_length(notes) <= 2000),
    status                text NOT NULL CHECK (status IN ('active', 'suspended', 'archived')),
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT customers_short_name_key UNIQUE (short_name),
    CONSTRAINT customers_vcs_group_key UNIQUE (vcs_group),
    CONSTRAINT customers_customer_index_key UNIQUE (customer_index)
);

CREATE TABLE tenants (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES customers (id),
    slug        text NOT NULL CHECK (slug ~ '^[a-z][a-z0-9-]{1,29}$'),
    name        text NOT NULL CHECK (char_length(name) BETWEEN 2 AND 80),
    is_primary  boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT tenants_slug_key UNIQUE (slug)
);
CREATE UNIQUE INDEX tenants_one_primary ON tenants (customer_id) WHERE is_primary;
CREATE INDEX tenants_customer ON tenants (customer_id, id);

CREATE TABLE projects (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES customers (id),
    tenant_id   bigint NOT NULL REFERENCES tenants (id),
    status      text NOT NULL CHECK (status IN ('provisioning', 'active', 'retired')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_customer ON projects (customer_id);
CREATE INDEX projects_tenant ON projects (tenant_id);

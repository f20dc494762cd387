-- The brand (one row, versioned) and its uploaded assets (bytes kept in the
-- database: at most 1 MiB each, few of them).

CREATE TABLE brand_assets (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('logo', 'favicon')),
    content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp', 'image/x-icon')),
    size_bytes   integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 1048576),
    sha256       bytea NOT NULL CHECK (length(sha256) = 32),
    content      bytea NOT NULL CHECK (length(content) = size_bytes),
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX brand_assets_kind ON brand_assets (kind, id);

CREATE TABLE brand (
    id               smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    brand_color      text NOT NULL DEFAULT '#2563eb' CHECK (brand_color ~ '^#[0-9a-f]{6}$'),
    logo_asset_id    bigint REFERENCES brand_assets (id),
    favicon_asset_id bigint REFERENCES brand_assets (id),
    first_party      boolean NOT NULL DEFAULT false,
    version          integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
INSERT INTO brand DEFAULT VALUES;

-- The licence: the installation id, generated once here and never changed,
-- and the bundle installed last (verified again whenever it is read).

CREATE TABLE licence (
    id              smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    installation_id text NOT NULL DEFAULT gen_random_uuid()::text,
    bundle          text CHECK (char_length(bundle) <= 16384),
    serial          text,
    installed_at    timestamptz,
    installed_by    text,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((bundle IS NULL) = (installed_at IS NULL))
);
INSERT INTO licence DEFAULT VALUES;

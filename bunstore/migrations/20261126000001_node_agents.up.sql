-- Node agents (issue 17): where each node's agent listens, the nonce its
-- node key is derived from (never the key), a cache the agent no longer
-- reports (missing), and the progress of a running copy.

ALTER TABLE ai_nodes ADD COLUMN agent_url text CHECK (char_length(agent_url) <= 300);

-- One enrolment per node: the key is HMAC(pepper, hostname, nonce), so the
-- database holds nothing a node key can be read from. Rotating replaces
-- the row; a node leaving the roster takes its enrolment with it.
CREATE TABLE ai_node_keys (
    hostname   text PRIMARY KEY REFERENCES ai_nodes (hostname) ON DELETE CASCADE,
    nonce      bytea NOT NULL CHECK (octet_length(nonce) = 32),
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE node_caches DROP CONSTRAINT node_caches_status_check;
ALTER TABLE node_caches ADD CONSTRAINT node_caches_status_check
    CHECK (status IN ('copying', 'ready', 'removing', 'missing'));

ALTER TABLE operations ADD COLUMN progress jsonb;

-- A node cache lists the operation still working on it (operation_id):
-- open operations by target, a handful at any time.
CREATE INDEX operations_open_target ON operations (target_type, target_id)
    WHERE status NOT IN ('succeeded', 'failed');

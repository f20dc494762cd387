-- Gateway keys open the gateway (/ai-gateway/verify): a key may expire, and
-- each key records when it was last used (written in batches by the
-- replicas, never on the request path; docs/decisions.md, "Gateway keys
-- open the gateway").

ALTER TABLE ai_gateway_keys
    ADD COLUMN expires_at   timestamptz,
    ADD COLUMN last_used_at timestamptz;

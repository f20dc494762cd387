-- A node cache operation whose agent does not answer (or refuses the node
-- key) says so while it is retried: {attempts, max_attempts,
-- next_attempt_at, code, reason}, NULL when it is not waiting to try
-- again (audit opsretry). Added only: an older release ignores it.
ALTER TABLE operations ADD COLUMN retry jsonb;

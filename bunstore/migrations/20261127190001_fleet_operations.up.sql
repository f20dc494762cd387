-- Fleet-wide reads (issue 19): GET /release-operations and GET /operations
-- list newest first across every project and kind, keyset-paged on
-- (created_at, id) of each table.

CREATE INDEX release_operations_created ON release_operations (created_at DESC, id DESC);
CREATE INDEX operations_created ON operations (created_at DESC, id DESC);

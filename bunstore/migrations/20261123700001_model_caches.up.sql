-- A catalogue row carries its node caches as JSON (hostname order), kept by
-- a trigger on node_caches: the hottest read, GET /ai/models/{id}, and
-- every model list read one row instead of running a json_agg subquery per
-- model (docs/decisions.md, Speed).

ALTER TABLE ai_models ADD COLUMN node_caches_json json NOT NULL DEFAULT '[]';

-- ai_model_caches_json is the node caches of one model as the catalogue
-- shows them.
CREATE FUNCTION ai_model_caches_json(model bigint) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT coalesce(json_agg(json_build_object('hostname', c.hostname, 'status', c.status,
        'size_gb', c.size_gb, 'path', c.path, 'updated_at', c.updated_at) ORDER BY c.hostname), '[]')
    FROM node_caches c WHERE c.model_id = model
$$;

-- ai_model_caches_refresh rewrites the column of the model (or models) a
-- node-cache change touched. It locks the model row first and computes in
-- a statement of its own, so under READ COMMITTED it sees every cache
-- committed before the lock was granted: two transactions changing caches
-- of one model cannot lose each other's change.
CREATE FUNCTION ai_model_caches_refresh() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    model bigint;
BEGIN
    FOR model IN
        SELECT DISTINCT m FROM unnest(ARRAY[
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.model_id END,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.model_id END]) AS m
        WHERE m IS NOT NULL ORDER BY m
    LOOP
        PERFORM 1 FROM ai_models WHERE id = model FOR NO KEY UPDATE;
        UPDATE ai_models SET node_caches_json = ai_model_caches_json(model) WHERE id = model;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER node_caches_refresh_model AFTER INSERT OR UPDATE OR DELETE ON node_caches
    FOR EACH ROW EXECUTE FUNCTION ai_model_caches_refresh();

UPDATE ai_models m SET node_caches_json = ai_model_caches_json(m.id)
WHERE EXISTS (SELECT 1 FROM node_caches c WHERE c.model_id = m.id);

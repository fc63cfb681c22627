-- Entities (docs/api.md, "Entities"): what a tenant tells warden about its subjects and resources,
-- {type, id, attributes, parents}, for policies to read. Refusals raise WE001 (an entity or a batch
-- that breaks the shape rules), WE002 (the plan's `entities` limit) and WE003 (no such entity).
-- The service writes them only through entities_upsert() and entity_delete(), which move the
-- tenant's entity head: the version every cached read is checked against (src/entities/lookup.ts).

-- The bounds of an entity and of a write (docs/api.md, "Entities").
CREATE FUNCTION entity_attributes_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 64 $$;
COMMENT ON FUNCTION entity_attributes_cap() IS 'The most attribute names one entity holds.';
CREATE FUNCTION entity_list_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 100 $$;
COMMENT ON FUNCTION entity_list_cap() IS 'The most items of one list-valued attribute.';
CREATE FUNCTION entity_parents_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 100 $$;
COMMENT ON FUNCTION entity_parents_cap() IS 'The most parents one entity names.';
CREATE FUNCTION entity_bytes_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 16384 $$;
COMMENT ON FUNCTION entity_bytes_cap() IS 'The most UTF-8 bytes of one entity''s JSON text as written (docs/api.md, "Entities").';
CREATE FUNCTION entities_per_call_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 1000 $$;
COMMENT ON FUNCTION entities_per_call_cap() IS 'The most entities one entities_upsert() call writes.';

-- What a stored entity may be, wherever it comes from; NULL when it is one. The service checks the
-- same rules first with each refusal's JSON path (src/entities/model.ts); this is the backstop.
-- Names of attributes are identifiers, so that a policy can name them (docs/policy.md).
CREATE FUNCTION entity_problem(p_type text, p_id text, p_attributes jsonb, p_parents jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_name text;
  v_value jsonb;
BEGIN
  IF p_type IS NULL OR char_length(p_type) NOT BETWEEN 1 AND 128 THEN RETURN 'type: 1 to 128 characters'; END IF;
  IF p_id IS NULL OR char_length(p_id) NOT BETWEEN 1 AND 128 THEN RETURN 'id: 1 to 128 characters'; END IF;
  IF jsonb_typeof(p_attributes) IS DISTINCT FROM 'object' THEN RETURN 'attributes: an object'; END IF;
  IF (SELECT count(*) FROM jsonb_object_keys(p_attributes)) > entity_attributes_cap() THEN RETURN 'attributes: too many names'; END IF;
  FOR v_name, v_value IN SELECT a.key, a.value FROM jsonb_each(p_attributes) a LOOP
    IF v_name !~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$' THEN RETURN 'attributes: a name that is not an identifier'; END IF;
    IF jsonb_typeof(v_value) = 'array' THEN
      IF jsonb_array_length(v_value) > entity_list_cap() THEN RETURN 'attributes: a list too long'; END IF;
      IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_value) e WHERE jsonb_typeof(e) NOT IN ('string', 'number', 'boolean')) THEN
        RETURN 'attributes: a list item that is not a scalar';
      END IF;
    ELSIF jsonb_typeof(v_value) NOT IN ('string', 'number', 'boolean') THEN
      RETURN 'attributes: a value that is neither a scalar nor a list of scalars';
    END IF;
  END LOOP;
  IF jsonb_typeof(p_parents) IS DISTINCT FROM 'array' OR jsonb_array_length(p_parents) > entity_parents_cap() THEN RETURN 'parents: a list of at most 100'; END IF;
  IF EXISTS (
    SELECT 1 FROM jsonb_array_elements(p_parents) r
    WHERE jsonb_typeof(r) <> 'object' OR (SELECT count(*) FROM jsonb_object_keys(r)) <> 2
       OR jsonb_typeof(r -> 'type') IS DISTINCT FROM 'string' OR jsonb_typeof(r -> 'id') IS DISTINCT FROM 'string'
       OR char_length(r ->> 'type') NOT BETWEEN 1 AND 128 OR char_length(r ->> 'id') NOT BETWEEN 1 AND 128
  ) THEN
    RETURN 'parents: each {type, id}';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION entity_problem(text, text, jsonb, jsonb) IS
  'NULL when (type, id, attributes, parents) is a valid entity; otherwise what is wrong (server-side text: never shown to a caller).';

-- One row per tenant that ever wrote an entity: `version` moves with every write (an upsert, a
-- delete), and every stored entity carries the version that wrote it; `stored` counts the
-- tenant's entities, for the plan's limit, without a count over the table.
CREATE TABLE entity_heads (
  tenant_id  text PRIMARY KEY REFERENCES tenants (tenant_id),
  version    bigint NOT NULL CHECK (version >= 1),
  stored     integer NOT NULL DEFAULT 0 CHECK (stored >= 0)
);

CREATE TABLE entities (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  type        text NOT NULL,
  id          text NOT NULL,
  attributes  jsonb NOT NULL,
  parents     jsonb NOT NULL DEFAULT '[]',
  -- The tenant's entity head version of the write that made this content.
  version     bigint NOT NULL CHECK (version >= 1),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- The member who wrote it (NULL: an operator).
  updated_by  text,
  PRIMARY KEY (tenant_id, type, id),
  CONSTRAINT entities_updated_by_fkey FOREIGN KEY (tenant_id, updated_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT entities_head_fkey FOREIGN KEY (tenant_id) REFERENCES entity_heads (tenant_id)
);

CREATE FUNCTION entities_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF entity_problem(NEW.type, NEW.id, NEW.attributes, NEW.parents) IS NOT NULL THEN
    RAISE EXCEPTION 'entity %/% of %: %', NEW.type, NEW.id, NEW.tenant_id, entity_problem(NEW.type, NEW.id, NEW.attributes, NEW.parents)
      USING ERRCODE = 'WE001';
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.version <= OLD.version THEN
    RAISE EXCEPTION 'an entity''s version only grows' USING ERRCODE = 'WE001';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION entities_guard() IS 'Refuses an entity that entity_problem() finds wrong, or a write that does not move its version forward (WE001).';
CREATE TRIGGER entities_guard BEFORE INSERT OR UPDATE ON entities FOR EACH ROW EXECUTE FUNCTION entities_guard();

-- An entity write moves the tenant's key_context_epoch (key_context_changed(), sql/schema/05_keys.sql),
-- as every change a key's context depends on does: a decision made with an API key has read that
-- epoch already (src/keys/authenticate.ts), so the entities it reads are checked against it at no
-- further cost (src/entities/lookup.ts). The move is announced on channel key_context.
CREATE TRIGGER entity_heads_key_context AFTER INSERT OR UPDATE ON entity_heads FOR EACH ROW EXECUTE FUNCTION key_context_changed();

-- p_entities: a JSON array of {type, id, attributes, parents?}, as the service wrote it (json, not
-- jsonb, so that each entity's size is measured on its text). All or nothing: one entity that is
-- not valid, or two naming the same entity, refuse the call (WE001); past the plan's `entities`
-- limit, WE002. Writes of one tenant take turns on its head row, so the count is exact.
CREATE FUNCTION entities_upsert(p_tenant_id text, p_member_id text, p_entities json)
RETURNS TABLE (upserted integer, version bigint, stored integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_items jsonb;
  v_count integer;
  v_new integer;
  v_version bigint;
  v_stored integer;
  v_limit integer;
  -- The time into a variable: a distributed cluster refuses now() in DO UPDATE SET.
  v_now timestamptz := now();
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_member_id, 'admin');
  IF json_typeof(p_entities) IS DISTINCT FROM 'array' OR json_array_length(p_entities) > entities_per_call_cap() THEN
    RAISE EXCEPTION 'a batch is a list of at most % entities', entities_per_call_cap() USING ERRCODE = 'WE001';
  END IF;
  IF EXISTS (
    SELECT 1 FROM json_array_elements(p_entities) e
    WHERE json_typeof(e) <> 'object' OR octet_length(e::text) > entity_bytes_cap()
       OR json_typeof(e -> 'type') IS DISTINCT FROM 'string' OR json_typeof(e -> 'id') IS DISTINCT FROM 'string'
       OR EXISTS (SELECT 1 FROM json_object_keys(e) k WHERE k NOT IN ('type', 'id', 'attributes', 'parents'))
       OR entity_problem(e ->> 'type', e ->> 'id', (e -> 'attributes')::jsonb, coalesce((e -> 'parents')::jsonb, '[]')) IS NOT NULL
  ) THEN
    RAISE EXCEPTION 'an entity of the batch is not valid' USING ERRCODE = 'WE001';
  END IF;
  v_items := p_entities::jsonb;
  v_count := jsonb_array_length(v_items);
  IF (SELECT count(DISTINCT (e ->> 'type', e ->> 'id')) FROM jsonb_array_elements(v_items) e) <> v_count THEN
    RAISE EXCEPTION 'two entities of the batch name the same entity' USING ERRCODE = 'WE001';
  END IF;

  INSERT INTO entity_heads AS h (tenant_id, version) VALUES (p_tenant_id, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET version = h.version + 1
  RETURNING h.version INTO v_version;
  SELECT count(*) INTO v_new
  FROM jsonb_array_elements(v_items) e
  WHERE NOT EXISTS (SELECT 1 FROM entities x WHERE x.tenant_id = p_tenant_id AND x.type = e ->> 'type' AND x.id = e ->> 'id');
  UPDATE entity_heads h SET stored = h.stored + v_new WHERE h.tenant_id = p_tenant_id RETURNING h.stored INTO v_stored;
  SELECT p.entities INTO v_limit FROM tenants t JOIN plans p ON p.plan = t.plan WHERE t.tenant_id = p_tenant_id;
  IF v_stored > v_limit THEN
    RAISE EXCEPTION 'the plan of % stores at most % entities', p_tenant_id, v_limit USING ERRCODE = 'WE002';
  END IF;

  INSERT INTO entities AS x (tenant_id, type, id, attributes, parents, version, updated_at, updated_by)
  SELECT p_tenant_id, e ->> 'type', e ->> 'id', e -> 'attributes', coalesce(e -> 'parents', '[]'), v_version, v_now, p_member_id
  FROM jsonb_array_elements(v_items) e
  ON CONFLICT (tenant_id, type, id) DO UPDATE
    SET attributes = EXCLUDED.attributes, parents = EXCLUDED.parents, version = EXCLUDED.version,
        updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by;
  RETURN QUERY SELECT v_count, v_version, v_stored;
END $$;
COMMENT ON FUNCTION entities_upsert(text, text, json) IS
  'Writes a batch of entities of one tenant, all or none, by an admin or owner (p_member_id; NULL: an operator): WE001 a batch or entity '
  'that is not valid, WE002 past the plan''s entities limit. Moves the tenant''s entity head; answers how many, the head''s version and the count stored.';

CREATE FUNCTION entity_delete(p_tenant_id text, p_member_id text, p_type text, p_id text)
RETURNS TABLE (version bigint, stored integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_version bigint;
  v_stored integer;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_member_id, 'admin');
  -- The head first, locked: a delete takes its turn with the tenant's other writes (an upsert
  -- locks the head before any entity row, so the two never wait on each other in a circle).
  PERFORM 1 FROM entity_heads h WHERE h.tenant_id = p_tenant_id FOR UPDATE;
  DELETE FROM entities x WHERE x.tenant_id = p_tenant_id AND x.type = p_type AND x.id = p_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no entity %/% of %', p_type, p_id, p_tenant_id USING ERRCODE = 'WE003';
  END IF;
  UPDATE entity_heads h SET version = h.version + 1, stored = h.stored - 1 WHERE h.tenant_id = p_tenant_id
  RETURNING h.version, h.stored INTO v_version, v_stored;
  RETURN QUERY SELECT v_version, v_stored;
END $$;
COMMENT ON FUNCTION entity_delete(text, text, text, text) IS
  'Deletes one entity of a tenant, by an admin or owner; WE003 when there is none. Moves the tenant''s entity head.';

-- The tenants' entity head versions (sql/queries/entities/heads.sql); a tenant that never wrote an
-- entity has no row (version 0 to its caller). No outer join, so that a cluster routes it to each
-- tenant's shard.
CREATE FUNCTION entity_head_versions(p_tenant_ids text[])
RETURNS TABLE (tenant_id text, version bigint)
LANGUAGE plpgsql STABLE SET enable_seqscan = off SET jit = off AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT h.tenant_id, h.version FROM entity_heads h WHERE h.tenant_id = ANY (p_tenant_ids);
END $$;
COMMENT ON FUNCTION entity_head_versions(text[]) IS 'Each named tenant''s entity head version, for the tenants that wrote an entity: moves with every entity write.';

-- The entities named (pairs of p_types and p_ids) of one tenant, after a first row that holds only
-- the tenant's key context epoch (tenant_key_context_epochs(), sql/schema/05_keys.sql), which every
-- entity write moves. Read first: an entity written between the two reads is then newer than the
-- epoch it is kept under, and read again at the next check, never the other way round.
CREATE FUNCTION entity_lookup(p_tenant_id text, p_types text[], p_ids text[])
RETURNS TABLE (epoch bigint, type text, id text, attributes jsonb, parents jsonb, version bigint)
LANGUAGE plpgsql STABLE SET jit = off AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT coalesce((SELECT k.key_context_epoch FROM tenant_key_context_epochs(ARRAY[p_tenant_id]) k), 0::bigint),
    NULL::text, NULL::text, NULL::jsonb, NULL::jsonb, NULL::bigint;
  RETURN QUERY SELECT NULL::bigint, e.type, e.id, e.attributes, e.parents, e.version
    FROM entities e
    WHERE e.tenant_id = p_tenant_id AND (e.type, e.id) IN (SELECT r.type, r.id FROM unnest(p_types, p_ids) AS r(type, id));
END $$;
COMMENT ON FUNCTION entity_lookup(text, text[], text[]) IS
  'A first row with the tenant''s key context epoch, which entity writes move, then the named entities of the tenant.';

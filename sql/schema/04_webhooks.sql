-- Webhooks (docs/api.md, "Webhooks"): a tenant's HTTPS endpoints, each told of the events it
-- subscribes to by a signed POST (Standard Webhooks). A delivery is a row of the outbox
-- (02_outbox.sql, channel 'webhook', recipient the endpoint's id) plus a row of
-- webhook_deliveries, the log the tenant reads; webhook_emit() writes both in the transaction of
-- the change they tell of, and the service's worker (src/webhooks/worker.ts) makes the attempts.
--
-- An endpoint moves active -> disabled (it answered 410 Gone) and active | disabled -> deleted;
-- nothing comes back. A deleted endpoint keeps its row (its deliveries name it) without its secrets.
-- Refusals (docs/error_codes.md): WH001 a move these rules forbid, WH002 one endpoint beyond
-- webhooks_cap(), WH003 a test of a disabled endpoint, WH004 the deliveries of an endpoint that is
-- not the tenant's, WH005 a delivery's log row changed other than by its last status code, WH006
-- one test event too many for an endpoint within an hour.

-- What a subscription names: an event's type (family.name) or "*" for every type.
CREATE FUNCTION webhook_event_type_valid(p_type text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT p_type ~ '^[a-z]+(_[a-z]+)*\.[a-z]+(_[a-z]+)*$' AND char_length(p_type) <= 63
$$;
COMMENT ON FUNCTION webhook_event_type_valid(text) IS 'Whether a text is an event''s type as webhooks carry it: family.name in lowercase words joined by _ (approval.requested).';

CREATE FUNCTION webhook_events_valid(p_events text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT cardinality(p_events) BETWEEN 1 AND 20
     AND (SELECT bool_and(e IS NOT NULL AND (e = '*' OR webhook_event_type_valid(e))) FROM unnest(p_events) AS e)
     AND (SELECT count(DISTINCT e) FROM unnest(p_events) AS e) = cardinality(p_events)
$$;
COMMENT ON FUNCTION webhook_events_valid(text[]) IS 'Whether an endpoint''s subscription is 1 to 20 distinct event types or "*" (webhooks.events'' CHECK).';

-- The sealed form src/crypto/secret-box.ts writes (SEALED_FORMAT there).
CREATE FUNCTION webhook_sealed_valid(p_sealed text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT p_sealed ~ '^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$' AND char_length(p_sealed) <= 500
$$;
COMMENT ON FUNCTION webhook_sealed_valid(text) IS 'Whether a text is a secret sealed by the service (v1.<iv>.<ciphertext>, base64url): never a secret in the clear.';

CREATE TABLE webhooks (
  webhook_id              text NOT NULL CHECK (webhook_id ~ '^whk_[0-9A-Za-z]{22}$'),
  tenant_id               text NOT NULL REFERENCES tenants (tenant_id),
  -- Checked by the service before it gets here (an https URL whose host resolves to public addresses).
  url                     text NOT NULL CHECK (char_length(url) <= 2000 AND url ~ '^https://[^\s/?#]+'),
  events                  text[] NOT NULL CHECK (webhook_events_valid(events)),
  description             text CHECK (char_length(description) BETWEEN 1 AND 200),
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'deleted')),
  -- The signing secret (whsec_...), sealed under the service secret with the webhook id as context.
  secret_sealed           text CHECK (webhook_sealed_valid(secret_sealed)),
  -- The secret before the last rotation: it also signs until previous_secret_until.
  previous_secret_sealed  text CHECK (webhook_sealed_valid(previous_secret_sealed)),
  previous_secret_until   timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  created_by              text,
  disabled_at             timestamptz,
  disabled_reason         text CHECK (char_length(disabled_reason) BETWEEN 1 AND 200),
  deleted_at              timestamptz,
  deleted_by              text,
  -- Keys lead with the tenant, as distribution by tenant_id wants (docs/scaling.md); ids are random.
  PRIMARY KEY (tenant_id, webhook_id),
  CONSTRAINT webhooks_created_by_fkey FOREIGN KEY (tenant_id, created_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT webhooks_deleted_by_fkey FOREIGN KEY (tenant_id, deleted_by) REFERENCES members (tenant_id, member_id),
  -- A live endpoint has its secret; a deleted one has none, not even the previous one.
  CONSTRAINT webhooks_secret_while_live CHECK ((status = 'deleted') = (secret_sealed IS NULL)),
  CONSTRAINT webhooks_previous_secret_pair CHECK ((previous_secret_sealed IS NULL) = (previous_secret_until IS NULL)),
  CONSTRAINT webhooks_previous_secret_while_live CHECK (status <> 'deleted' OR previous_secret_sealed IS NULL),
  CONSTRAINT webhooks_deleted_at_matches_status CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
  CONSTRAINT webhooks_disabled_at_matches_status CHECK (
    (status = 'active' AND disabled_at IS NULL AND disabled_reason IS NULL)
    OR (status = 'disabled' AND disabled_at IS NOT NULL AND disabled_reason IS NOT NULL)
    OR status = 'deleted')
);
CREATE INDEX webhooks_tenant_live_idx ON webhooks (tenant_id, created_at) WHERE status <> 'deleted';

CREATE FUNCTION webhooks_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 10 $$;
COMMENT ON FUNCTION webhooks_cap() IS 'Most endpoints (active or disabled) one tenant holds (WH002 beyond).';

CREATE FUNCTION webhook_secret_overlap() RETURNS interval LANGUAGE sql IMMUTABLE AS $$ SELECT interval '24 hours' $$;
COMMENT ON FUNCTION webhook_secret_overlap() IS 'How long the secret a rotation replaced still signs deliveries beside the new one.';

-- Every write to webhooks passes here, whoever makes it (the service, an operator, psql).
CREATE FUNCTION webhooks_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_live integer;
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'webhook endpoints are never deleted: their status becomes deleted' USING ERRCODE = 'WH001';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'active' OR NEW.previous_secret_sealed IS NOT NULL THEN
      RAISE EXCEPTION 'an endpoint is created active, with one secret' USING ERRCODE = 'WH001';
    END IF;
    -- Creations of one tenant take turns until their transaction ends: two cannot both pass at cap - 1.
    PERFORM pg_advisory_xact_lock(hashtext('warden.webhooks'), hashtext(NEW.tenant_id));
    SELECT count(*) INTO v_live FROM webhooks w WHERE w.tenant_id = NEW.tenant_id AND w.status <> 'deleted';
    IF v_live >= webhooks_cap() THEN
      RAISE EXCEPTION 'tenant % has % webhook endpoints', NEW.tenant_id, v_live USING ERRCODE = 'WH002';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'deleted' THEN
    RAISE EXCEPTION 'webhook % is deleted and never changes', OLD.webhook_id USING ERRCODE = 'WH001';
  END IF;
  IF NEW.webhook_id <> OLD.webhook_id OR NEW.tenant_id <> OLD.tenant_id OR NEW.url <> OLD.url OR NEW.events <> OLD.events
     OR NEW.description IS DISTINCT FROM OLD.description OR NEW.created_at <> OLD.created_at OR NEW.created_by IS DISTINCT FROM OLD.created_by THEN
    RAISE EXCEPTION 'what webhook % is (its url, events, description, tenant, creation) never changes', OLD.webhook_id USING ERRCODE = 'WH001';
  END IF;
  IF OLD.status = 'disabled' AND NEW.status = 'active' THEN
    RAISE EXCEPTION 'webhook % was disabled (410 Gone) and stays so: create a new endpoint', OLD.webhook_id USING ERRCODE = 'WH001';
  END IF;
  IF OLD.disabled_at IS NOT NULL AND NEW.status <> 'deleted' AND (NEW.disabled_at <> OLD.disabled_at OR NEW.disabled_reason <> OLD.disabled_reason) THEN
    RAISE EXCEPTION 'when and why webhook % was disabled never changes', OLD.webhook_id USING ERRCODE = 'WH001';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION webhooks_guard() IS
  'An endpoint is born active with one secret, within webhooks_cap() live endpoints per tenant (WH002); it moves only active -> disabled and '
  'active | disabled -> deleted; a deleted one never changes, a disabled one never comes back, what it is (url, events, tenant) never changes, '
  'and no row is ever deleted (WH001).';
CREATE TRIGGER webhooks_guard BEFORE INSERT OR UPDATE OR DELETE ON webhooks
  FOR EACH ROW EXECUTE FUNCTION webhooks_guard();
CREATE TRIGGER webhooks_no_truncate BEFORE TRUNCATE ON webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION webhooks_guard();

-- The log a tenant reads: one row per delivery (one event to one endpoint). Its state (pending,
-- sent, failed; attempts; when next) is the outbox row's; this row adds what the outbox does not
-- keep: the event's type and id for the list, and the status code of the last attempt.
CREATE TABLE webhook_deliveries (
  delivery_id       text NOT NULL CHECK (delivery_id ~ '^dlv_[0-9A-Za-z]{22}$'),
  outbox_id         bigint NOT NULL REFERENCES outbox (id),
  tenant_id         text NOT NULL,
  webhook_id        text NOT NULL,
  event             text NOT NULL CHECK (webhook_event_type_valid(event)),
  -- The HTTP status of the last attempt; NULL before one, and after one that got no answer.
  last_status_code  integer CHECK (last_status_code BETWEEN 100 AND 599),
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, delivery_id),
  CONSTRAINT webhook_deliveries_outbox_key UNIQUE (tenant_id, outbox_id),
  CONSTRAINT webhook_deliveries_webhook_fkey FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, webhook_id)
);
CREATE INDEX webhook_deliveries_page_idx ON webhook_deliveries (tenant_id, webhook_id, outbox_id);
-- The test events of the last hour, counted for webhook_tests_cap().
CREATE INDEX webhook_deliveries_tests_idx ON webhook_deliveries (tenant_id, webhook_id, created_at) WHERE event = 'webhook.test';

CREATE FUNCTION webhook_deliveries_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.delivery_id = OLD.delivery_id AND NEW.outbox_id = OLD.outbox_id AND NEW.tenant_id = OLD.tenant_id
     AND NEW.webhook_id = OLD.webhook_id AND NEW.event = OLD.event AND NEW.created_at = OLD.created_at THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'a webhook delivery''s log row changes only in its last status code, and is never deleted' USING ERRCODE = 'WH005';
END $$;
COMMENT ON FUNCTION webhook_deliveries_guard() IS
  'A delivery''s log row changes only in last_status_code and is never deleted or truncated (WH005).';
CREATE TRIGGER webhook_deliveries_guard BEFORE UPDATE OR DELETE ON webhook_deliveries
  FOR EACH ROW EXECUTE FUNCTION webhook_deliveries_guard();
CREATE TRIGGER webhook_deliveries_no_truncate BEFORE TRUNCATE ON webhook_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_guard();

-- Queuing -------------------------------------------------------------------------------------

-- One delivery of one event to one endpoint; the callers below choose the endpoints.
CREATE FUNCTION webhook_enqueue(p_webhook_id text, p_tenant_id text, p_type text, p_data jsonb) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_delivery_id text := 'dlv_' || random_base62(22);
  v_outbox_id bigint;
BEGIN
  IF p_type IS NULL OR NOT webhook_event_type_valid(p_type) THEN
    RAISE EXCEPTION 'not an event type: %', p_type USING ERRCODE = '22023';
  END IF;
  IF p_data IS NULL OR jsonb_typeof(p_data) <> 'object' THEN
    RAISE EXCEPTION 'an event''s data is a JSON object' USING ERRCODE = '22023';
  END IF;
  -- The body's parts ({type, timestamp, data}); the type is the row's kind. The timestamp is the change's.
  v_outbox_id := outbox_enqueue('webhook', p_type, p_webhook_id, p_tenant_id,
    jsonb_build_object('delivery_id', v_delivery_id, 'timestamp', iso_time(now()), 'data', p_data));
  INSERT INTO webhook_deliveries (delivery_id, outbox_id, tenant_id, webhook_id, event)
  VALUES (v_delivery_id, v_outbox_id, p_tenant_id, p_webhook_id, p_type);
  RETURN v_delivery_id;
END $$;
COMMENT ON FUNCTION webhook_enqueue(text, text, text, jsonb) IS
  'Queues one delivery of an event (type, data: a JSON object) to one endpoint: an outbox row of channel webhook and its log row; returns '
  'the delivery id (dlv_, also the webhook-id header). 22023 for a malformed type or data. Callers choose the endpoint: webhook_emit(), webhook_test().';

CREATE FUNCTION webhook_emit(p_tenant_id text, p_type text, p_data jsonb) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_webhook_id text;
  v_count integer := 0;
BEGIN
  FOR v_webhook_id IN
    SELECT w.webhook_id FROM webhooks w
     WHERE w.tenant_id = p_tenant_id AND w.status = 'active' AND (p_type = ANY (w.events) OR '*' = ANY (w.events))
     ORDER BY w.created_at, w.webhook_id
  LOOP
    PERFORM webhook_enqueue(v_webhook_id, p_tenant_id, p_type, p_data);
    v_count := v_count + 1;
  END LOOP;
  RETURN v_count;
END $$;
COMMENT ON FUNCTION webhook_emit(text, text, jsonb) IS
  'Tells the tenant''s endpoints of an event: one delivery (webhook_enqueue) per active endpoint subscribed to p_type or to "*"; returns how many. '
  'Call it from any procedure in the transaction of the change the event is about (approval_* call it for approval.requested, .approved, .denied, '
  '.expired, .cancelled, .executed), so the deliveries commit, or roll back, with the change. p_type is family.name (22023 otherwise); p_data '
  'a JSON object with the ids and signed receipts the event is about (the body''s data: keep it small, it waits in the outbox until delivered). '
  'The body is {type, timestamp, data}, timestamp the transaction''s time; the service''s worker signs each attempt (Standard Webhooks) and '
  'retries with backoff for about three days. Nudge the worker after the commit, or it finds the rows within its poll interval.';

CREATE FUNCTION webhook_tests_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 60 $$;
COMMENT ON FUNCTION webhook_tests_cap() IS 'Most webhook.test events one endpoint is sent within an hour (WH006 beyond): a test is a row kept like any delivery.';

CREATE FUNCTION webhook_test(p_tenant_id text, p_actor text, p_webhook_id text)
RETURNS TABLE (delivery_id text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_status text;
  v_recent integer;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  -- Tests of one endpoint take turns until their transaction ends: two cannot both pass at cap - 1.
  SELECT w.status INTO v_status FROM webhooks w
   WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id AND w.status <> 'deleted' FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN; -- unknown, deleted or another tenant's: the caller answers 404
  END IF;
  IF v_status = 'disabled' THEN
    RAISE EXCEPTION 'webhook % is disabled', p_webhook_id USING ERRCODE = 'WH003';
  END IF;
  SELECT count(*) INTO v_recent FROM (
    SELECT 1 FROM webhook_deliveries d
     WHERE d.tenant_id = p_tenant_id AND d.webhook_id = p_webhook_id AND d.event = 'webhook.test' AND d.created_at > now() - interval '1 hour'
     LIMIT webhook_tests_cap()) recent;
  IF v_recent >= webhook_tests_cap() THEN
    RAISE EXCEPTION 'webhook % was sent % test events within the hour', p_webhook_id, v_recent USING ERRCODE = 'WH006';
  END IF;
  RETURN QUERY SELECT webhook_enqueue(p_webhook_id, p_tenant_id, 'webhook.test', jsonb_build_object('webhook_id', p_webhook_id));
END $$;
COMMENT ON FUNCTION webhook_test(text, text, text) IS
  'An admin (or owner) of the tenant queues a webhook.test event ({webhook_id}) to one of its endpoints, whatever it subscribes to; returns '
  'the delivery id. No row: not this tenant''s live endpoint. WH003: the endpoint is disabled; WH006: webhook_tests_cap() tests within the '
  'last hour; WT021: the role.';

-- Endpoints -----------------------------------------------------------------------------------

CREATE FUNCTION webhook_create(p_webhook_id text, p_tenant_id text, p_actor text, p_url text, p_events text[], p_description text, p_secret_sealed text)
RETURNS TABLE (webhook_id text, url text, events text[], description text, status text, created_at text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v webhooks;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  -- The time formed after the insert: a distributed cluster refuses iso_time() in RETURNING (docs/scaling.md).
  INSERT INTO webhooks AS w (webhook_id, tenant_id, url, events, description, secret_sealed, created_by)
  VALUES (p_webhook_id, p_tenant_id, p_url, p_events, p_description, p_secret_sealed, p_actor)
  RETURNING w.* INTO v;
  RETURN QUERY SELECT v.webhook_id, v.url, v.events, v.description, v.status, iso_time(v.created_at);
END $$;
COMMENT ON FUNCTION webhook_create(text, text, text, text, text[], text, text) IS
  'An admin (or owner) of the tenant adds an active endpoint with its sealed secret, within webhooks_cap() (WH002; WT021 the role). The service '
  'has checked the URL (https, a public host) before.';

CREATE FUNCTION webhook_rotate_secret(p_tenant_id text, p_actor text, p_webhook_id text, p_secret_sealed text)
RETURNS TABLE (webhook_id text, previous_secret_until text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_until timestamptz;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  -- The time formed after the update: a distributed cluster refuses iso_time() in RETURNING (docs/scaling.md).
  UPDATE webhooks w
     SET previous_secret_sealed = w.secret_sealed,
         previous_secret_until = now() + webhook_secret_overlap(),
         secret_sealed = p_secret_sealed
   WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id AND w.status <> 'deleted'
  RETURNING w.previous_secret_until INTO v_until;
  IF FOUND THEN
    RETURN QUERY SELECT p_webhook_id, iso_time(v_until);
  END IF;
END $$;
COMMENT ON FUNCTION webhook_rotate_secret(text, text, text, text) IS
  'An admin (or owner) gives an endpoint a new sealed secret; the one it replaces signs beside it for webhook_secret_overlap() (24 h), and one '
  'replaced before stops at once. No row: not this tenant''s live endpoint; WT021 the role.';

-- Ends the pending deliveries of an endpoint that will take no more (deleted, or disabled by a 410),
-- but the one in the caller's hands, which its worker records itself.
-- PL/pgSQL rather than SQL, as member_session(): every function that reads a tenant table with
-- its arguments (a distributed cluster refuses those statements in a SQL function, docs/scaling.md).
CREATE FUNCTION webhook_deliveries_abandon(p_tenant_id text, p_webhook_id text, p_reason text, p_except_outbox_id bigint) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_ended integer;
BEGIN
  UPDATE outbox o SET status = 'failed', data = '{}'::jsonb, last_error = p_reason
   WHERE o.status = 'pending' AND o.channel = 'webhook'
     AND o.id IN (SELECT d.outbox_id FROM webhook_deliveries d WHERE d.tenant_id = p_tenant_id AND d.webhook_id = p_webhook_id)
     AND o.id IS DISTINCT FROM p_except_outbox_id;
  GET DIAGNOSTICS v_ended = ROW_COUNT;
  RETURN v_ended;
END $$;
COMMENT ON FUNCTION webhook_deliveries_abandon(text, text, text, bigint) IS
  'Fails every pending delivery of an endpoint (its outbox rows, data emptied) but p_except_outbox_id; returns how many.';

CREATE FUNCTION webhook_delete(p_tenant_id text, p_actor text, p_webhook_id text)
RETURNS TABLE (webhook_id text, url text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  RETURN QUERY
    UPDATE webhooks w
       SET status = 'deleted', deleted_at = now(), deleted_by = p_actor,
           secret_sealed = NULL, previous_secret_sealed = NULL, previous_secret_until = NULL
     WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id AND w.status <> 'deleted'
    RETURNING w.webhook_id, w.url;
  IF FOUND THEN
    PERFORM webhook_deliveries_abandon(p_tenant_id, p_webhook_id, 'the endpoint was deleted', NULL);
  END IF;
END $$;
COMMENT ON FUNCTION webhook_delete(text, text, text) IS
  'An admin (or owner) deletes an endpoint: status deleted, its secrets erased, its pending deliveries failed. No row: not this tenant''s live '
  'endpoint (already deleted included); WT021 the role.';

CREATE FUNCTION webhook_disable(p_tenant_id text, p_webhook_id text, p_reason text, p_outbox_id bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE webhooks w SET status = 'disabled', disabled_at = now(), disabled_reason = left(p_reason, 200)
   WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id AND w.status = 'active';
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM webhook_deliveries_abandon(p_tenant_id, p_webhook_id, 'the endpoint was disabled: ' || left(p_reason, 200), p_outbox_id);
  RETURN true;
END $$;
COMMENT ON FUNCTION webhook_disable(text, text, text, bigint) IS
  'The worker disables an active endpoint that answered 410 Gone (delivery p_outbox_id, which the worker records itself) and fails its other '
  'pending deliveries; false when it was not active.';

-- Reading -------------------------------------------------------------------------------------

CREATE FUNCTION webhooks_list(p_tenant_id text)
RETURNS TABLE (webhook_id text, url text, events text[], description text, status text, created_at text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as webhook_deliveries_abandon().
  RETURN QUERY
    SELECT w.webhook_id, w.url, w.events, w.description, w.status, iso_time(w.created_at)
    FROM webhooks w
    WHERE w.tenant_id = p_tenant_id AND w.status <> 'deleted'
    ORDER BY w.created_at DESC, w.webhook_id DESC;
END $$;
COMMENT ON FUNCTION webhooks_list(text) IS 'The tenant''s live endpoints (active and disabled; at most webhooks_cap()), newest first; never a secret.';

-- What an attempt needs; the previous secret only while it still signs.
CREATE FUNCTION webhook_for_delivery(p_tenant_id text, p_webhook_id text)
RETURNS TABLE (webhook_id text, tenant_id text, url text, status text, secret_sealed text, previous_secret_sealed text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as webhook_deliveries_abandon().
  RETURN QUERY
    SELECT w.webhook_id, w.tenant_id, w.url, w.status, w.secret_sealed,
           CASE WHEN w.previous_secret_until > now() THEN w.previous_secret_sealed END
    FROM webhooks w
    WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id;
END $$;
COMMENT ON FUNCTION webhook_for_delivery(text, text) IS
  'An endpoint as the worker needs it for one attempt: url, status, sealed secret, and the previous sealed secret while it still signs (else NULL).';

CREATE FUNCTION webhook_delivery_attempted(p_tenant_id text, p_outbox_id bigint, p_status_code integer) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as webhook_deliveries_abandon().
  UPDATE webhook_deliveries d SET last_status_code = p_status_code WHERE d.tenant_id = p_tenant_id AND d.outbox_id = p_outbox_id;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION webhook_delivery_attempted(text, bigint, integer) IS
  'Records the HTTP status of a delivery''s latest attempt (NULL: it got no answer: refused, unreachable, timed out); false when no delivery has that outbox row.';

CREATE FUNCTION webhook_deliveries_page(p_tenant_id text, p_webhook_id text, p_before bigint, p_limit integer)
RETURNS TABLE (delivery_id text, event text, status text, attempts integer, last_status_code integer, last_error text,
               next_attempt_at text, created_at text, page_position bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id AND w.status <> 'deleted') THEN
    RAISE EXCEPTION 'no webhook %', p_webhook_id USING ERRCODE = 'WH004';
  END IF;
  RETURN QUERY
    SELECT d.delivery_id, d.event,
           CASE o.status WHEN 'sent' THEN 'delivered' ELSE o.status END,
           o.attempts, d.last_status_code,
           -- Why the last attempt failed (the worker's short reason); a delivered one has none.
           CASE WHEN o.status <> 'sent' THEN o.last_error END,
           CASE WHEN o.status = 'pending' THEN iso_time(o.next_attempt_at) END,
           iso_time(d.created_at), d.outbox_id
    FROM webhook_deliveries d
    JOIN outbox o ON o.id = d.outbox_id
    WHERE d.tenant_id = p_tenant_id AND d.webhook_id = p_webhook_id AND (p_before IS NULL OR d.outbox_id < p_before)
    ORDER BY d.outbox_id DESC
    LIMIT p_limit;
END $$;
COMMENT ON FUNCTION webhook_deliveries_page(text, text, bigint, integer) IS
  'A page of an endpoint''s deliveries, newest first, before position p_before (the page_position of the last row of the page before): status '
  'pending | delivered | failed, attempts so far, the last attempt''s HTTP status, why the last attempt failed (NULL once delivered or before '
  'an attempt), when the next attempt is due (pending only). WH004: not this '
  'tenant''s live endpoint.';

-- JWT_SECRET changed (JWT_SECRET_PREVIOUS set): the service seals each secret again under the new one.
CREATE FUNCTION webhooks_sealed_page(p_after_tenant text, p_after_webhook text, p_limit integer)
RETURNS TABLE (tenant_id text, webhook_id text, secret_sealed text, previous_secret_sealed text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as webhook_deliveries_abandon().
  RETURN QUERY
    SELECT w.tenant_id, w.webhook_id, w.secret_sealed, w.previous_secret_sealed
    FROM webhooks w
    WHERE w.status <> 'deleted' AND (w.tenant_id, w.webhook_id) > (p_after_tenant, p_after_webhook)
    ORDER BY w.tenant_id, w.webhook_id
    LIMIT p_limit;
END $$;
COMMENT ON FUNCTION webhooks_sealed_page(text, text, integer) IS 'Live endpoints'' sealed secrets after a (tenant, webhook id) position, in key order, for the reseal at start.';

CREATE FUNCTION webhook_reseal(p_tenant_id text, p_webhook_id text, p_old text, p_old_previous text, p_new text, p_new_previous text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as webhook_deliveries_abandon().
  UPDATE webhooks w SET secret_sealed = p_new, previous_secret_sealed = p_new_previous
   WHERE w.tenant_id = p_tenant_id AND w.webhook_id = p_webhook_id AND w.status <> 'deleted'
     AND w.secret_sealed = p_old AND w.previous_secret_sealed IS NOT DISTINCT FROM p_old_previous;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION webhook_reseal(text, text, text, text, text, text) IS
  'Replaces an endpoint''s sealed secrets by the same secrets sealed under the new service secret, only if they are still the ones read (a '
  'rotation meanwhile wins); true when replaced.';

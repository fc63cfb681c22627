-- The outbox: one row per delivery to make on a channel (mail, webhooks), written
-- in the same transaction as the change that causes it and delivered by the service's worker for
-- that channel (src/outbox/worker.ts). Each channel's worker claims only its own rows and brings
-- its own retry policy; claiming, leases, backoff and the end states are the same for every
-- channel. It runs on the database clock because SQL-only producers (operator scripts) enqueue too.

CREATE TABLE outbox (
  id               bigserial PRIMARY KEY,
  -- Whose worker delivers it.
  channel          text NOT NULL CHECK (channel IN ('mail', 'webhook')),
  -- What to deliver, within the channel: for mail the template (src/mail/templates.ts), for a
  -- webhook the event's type (approval.requested). A mail kind the worker does not know is retried
  -- (another instance may know it), then ends as 'failed'.
  kind             text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_.]{0,62}$'),
  -- Where to: for mail the address, for a webhook the endpoint's id (04_webhooks.sql).
  recipient        text NOT NULL CHECK (char_length(recipient) BETWEEN 1 AND 2048),
  -- Whose delivery it is, for operators (NULL: no tenant's). A plain column, no foreign key: the
  -- outbox stays off the tenant shards, and such a table may not reference a distributed one
  -- (docs/scaling.md).
  tenant_id        text,
  -- What the delivery needs (for mail the template's variables). For verification, reset and
  -- invitation mail this holds the token sealed (token_sealed) until the message leaves; it is
  -- emptied as soon as the row is sent or fails (docs/decisions.md).
  data             jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text CHECK (char_length(last_error) <= 1000),
  created_at       timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz,
  CONSTRAINT outbox_sent_at_matches_status CHECK ((status = 'sent') = (sent_at IS NOT NULL)),
  CONSTRAINT outbox_data_only_while_pending CHECK (status = 'pending' OR data = '{}'::jsonb),
  -- A link's token waits only sealed (token_sealed), never as it is (src/mail/worker.ts opens it).
  CONSTRAINT outbox_no_raw_token CHECK (NOT (data ? 'token')),
  CONSTRAINT outbox_mail_address CHECK (channel <> 'mail' OR (char_length(recipient) BETWEEN 3 AND 254 AND position('@' IN recipient) > 1)),
  CONSTRAINT outbox_webhook_endpoint CHECK (channel <> 'webhook' OR recipient ~ '^whk_[0-9A-Za-z]{22}$')
);
CREATE INDEX outbox_due_idx ON outbox (channel, next_attempt_at, id) WHERE status = 'pending';

CREATE FUNCTION outbox_enqueue(p_channel text, p_kind text, p_recipient text, p_tenant_id text, p_data jsonb) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  INSERT INTO outbox (channel, kind, recipient, tenant_id, data)
  VALUES (p_channel, p_kind, p_recipient, p_tenant_id, coalesce(p_data, '{}'::jsonb))
  RETURNING id
$$;
COMMENT ON FUNCTION outbox_enqueue(text, text, text, text, jsonb) IS
  'Queues one delivery on a channel (kind says what, recipient where to, data what it needs); the channel''s worker delivers it within its poll '
  'interval. Call it in the transaction of the change that causes it.';

-- Claims due rows of one channel. The claim itself is the lease: attempts counts up and
-- next_attempt_at moves past the lease, so no other instance takes the row while it is being
-- delivered, and a row whose worker died is retried once the lease runs out (at-least-once delivery).
CREATE FUNCTION outbox_claim(p_channel text, p_limit integer, p_lease_seconds integer)
RETURNS TABLE (id bigint, kind text, recipient text, tenant_id text, data jsonb, attempts integer)
LANGUAGE sql VOLATILE AS $$
  UPDATE outbox m
     SET attempts = m.attempts + 1,
         next_attempt_at = now() + make_interval(secs => p_lease_seconds)
    FROM (SELECT o.id FROM outbox o
           WHERE o.channel = p_channel AND o.status = 'pending' AND o.next_attempt_at <= now()
           ORDER BY o.next_attempt_at, o.id
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED) due
   WHERE m.id = due.id
  RETURNING m.id, m.kind, m.recipient, m.tenant_id, m.data, m.attempts
$$;
COMMENT ON FUNCTION outbox_claim(text, integer, integer) IS
  'Takes up to p_limit due pending rows of the channel for this worker (SKIP LOCKED: instances never wait on each other) and leases them for p_lease_seconds.';

CREATE FUNCTION outbox_sent(p_id bigint) RETURNS boolean
LANGUAGE sql VOLATILE AS $$
  WITH done AS (
    UPDATE outbox SET status = 'sent', sent_at = now(), data = '{}'::jsonb, last_error = NULL
     WHERE id = p_id AND status = 'pending'
    RETURNING id
  )
  SELECT EXISTS (SELECT 1 FROM done)
$$;
COMMENT ON FUNCTION outbox_sent(bigint) IS
  'Marks a delivery made and empties its data (a sealed token leaves the database with the mail); false when the row was not pending.';

-- A failed attempt: retried after base * 2^(attempts - 1) seconds, capped, until max_attempts;
-- a permanent failure (an unknown template, a refusal by the receiving server) ends the row at once.
-- Each channel's worker passes its own policy.
CREATE FUNCTION outbox_attempt_failed(
  p_id bigint, p_error text, p_permanent boolean,
  p_max_attempts integer, p_base_seconds integer, p_cap_seconds integer
) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_attempts integer;
  v_status text;
BEGIN
  SELECT attempts INTO v_attempts FROM outbox WHERE id = p_id AND status = 'pending' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF p_permanent OR v_attempts >= p_max_attempts THEN
    v_status := 'failed';
    UPDATE outbox SET status = 'failed', data = '{}'::jsonb, last_error = left(p_error, 1000) WHERE id = p_id;
  ELSE
    v_status := 'pending';
    UPDATE outbox
       SET last_error = left(p_error, 1000),
           next_attempt_at = now() + make_interval(secs => least(p_cap_seconds::float8, p_base_seconds * power(2, greatest(v_attempts - 1, 0))))
     WHERE id = p_id;
  END IF;
  RETURN v_status;
END $$;
COMMENT ON FUNCTION outbox_attempt_failed(bigint, text, boolean, integer, integer, integer) IS
  'Records a failed delivery: exponential backoff (capped) while attempts remain, else status failed with data emptied. Returns the new status '
  '(NULL when the row was not pending).';

-- The mail channel ---------------------------------------------------------------------------

-- What SQL producers (verification, reset, invitations, upgrade reviews) call.
CREATE FUNCTION mail_enqueue(p_kind text, p_to_email text, p_tenant_id text, p_data jsonb) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT outbox_enqueue('mail', p_kind, p_to_email, p_tenant_id, p_data)
$$;
COMMENT ON FUNCTION mail_enqueue(text, text, text, jsonb) IS
  'Queues one message on the mail channel (kind names its template, data its variables); the service delivers it within its poll interval. '
  'Call it in the transaction of the change that causes the mail.';

-- Operators: the mail outbox at a glance (`warden ops mail list`, sql/ops/mail_list.sql). Never
-- shows data: it may hold a sealed token until the message leaves.
CREATE FUNCTION ops_mail_list(p_status text)
RETURNS TABLE (id bigint, kind text, to_email text, tenant_id text, status text, attempts integer,
               next_attempt_at text, last_error text, created_at text, sent_at text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF p_status IS NOT NULL AND p_status NOT IN ('pending', 'sent', 'failed', 'all') THEN
    RAISE EXCEPTION 'status must be pending, sent, failed or all, not %', p_status USING ERRCODE = 'WM001';
  END IF;
  RETURN QUERY
    SELECT m.id, m.kind, m.recipient, m.tenant_id, m.status, m.attempts, iso_time(m.next_attempt_at),
           m.last_error, iso_time(m.created_at), iso_time(m.sent_at)
    FROM outbox m
    WHERE m.channel = 'mail' AND (coalesce(p_status, 'all') = 'all' OR m.status = p_status)
    ORDER BY m.id DESC
    LIMIT 100;
END $$;
COMMENT ON FUNCTION ops_mail_list(text) IS
  'The latest 100 messages of the mail outbox (of one status, or all), newest first, without their data (it may hold a sealed token). WM001 on an unknown status.';

-- Operators: send a waiting message now (`warden ops mail retry ID`), for example once a broken
-- SMTP server is fixed. Only a pending message can be retried: a sent or failed one has had its
-- data (and any token in it) erased, so the customer asks for a new mail instead.
CREATE FUNCTION ops_mail_retry(p_id bigint)
RETURNS TABLE (id bigint, kind text, to_email text, status text, attempts integer, next_attempt_at text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_status text;
BEGIN
  SELECT m.status INTO v_status FROM outbox m WHERE m.id = p_id AND m.channel = 'mail' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no message %', p_id USING ERRCODE = 'WM002';
  END IF;
  IF v_status <> 'pending' THEN
    RAISE EXCEPTION 'message % is %: only a pending message can be retried (its data is erased once it is sent or failed)', p_id, v_status USING ERRCODE = 'WM003';
  END IF;
  RETURN QUERY
    UPDATE outbox m SET attempts = 0, next_attempt_at = now()
     WHERE m.id = p_id
    RETURNING m.id, m.kind, m.recipient, m.status, m.attempts, iso_time(m.next_attempt_at);
END $$;
COMMENT ON FUNCTION ops_mail_retry(bigint) IS
  'Makes a pending message of the mail outbox due now with a fresh set of attempts (the worker sends it on its next poll). WM002 no such message; '
  'WM003 it is sent or failed (its data is erased: the customer requests a new mail).';

-- Plan upgrade requests and operator review (docs/api.md, Plans, usage and upgrades; README, Operators).
-- The database owns the state machine: pending -> approved | rejected | cancelled, terminal
-- states never change, one pending request per tenant, plans only move up, and a tenant's plan
-- changes only through an approved request. Custom SQLSTATEs (docs/error_codes.md):
--   WU001 invalid_plan (unknown, or not above the current plan)   WU002 not_pending
--   WU003 plan changed outside an approved upgrade                 WU004 bad review input
--   WU006 upgrade_pending (the tenant has a pending request already)

CREATE TABLE upgrade_requests (
  request_id      text NOT NULL CHECK (request_id ~ '^upgr_[0-9A-Za-z]{22}$'),
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
  from_plan       text NOT NULL REFERENCES plans (plan),
  requested_plan  text NOT NULL REFERENCES plans (plan),
  reason          text NOT NULL CHECK (char_length(reason) <= 2000),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  reviewed_at     timestamptz,
  reviewed_by     text CHECK (char_length(reviewed_by) BETWEEN 1 AND 200),
  review_note     text CHECK (char_length(review_note) <= 2000),
  cancelled_at    timestamptz,
  -- The member of the tenant who asked (NULL: an operator, or before it mattered).
  requested_by    text,
  -- Keyed by tenant first, as every tenant table (docs/scaling.md).
  PRIMARY KEY (tenant_id, request_id),
  CONSTRAINT upgrade_requests_requested_by_fkey FOREIGN KEY (tenant_id, requested_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT upgrade_requests_review_matches_status CHECK (
    (status IN ('approved', 'rejected')) = (reviewed_at IS NOT NULL AND reviewed_by IS NOT NULL)),
  CONSTRAINT upgrade_requests_cancel_matches_status CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
  CONSTRAINT upgrade_requests_rejection_has_note CHECK (status <> 'rejected' OR char_length(btrim(review_note)) > 0)
);
-- upgrade_request_create() refuses a second pending request itself (WU006); this is the backstop.
CREATE UNIQUE INDEX upgrade_requests_one_pending ON upgrade_requests (tenant_id) WHERE status = 'pending';
CREATE INDEX upgrade_requests_tenant_idx ON upgrade_requests (tenant_id, created_at DESC);
CREATE INDEX upgrade_requests_pending_idx ON upgrade_requests (created_at) WHERE status = 'pending';
-- An operator names a request by its id alone (sql/ops/upgrades_*.sql).
CREATE INDEX upgrade_requests_request_idx ON upgrade_requests (request_id);

CREATE FUNCTION upgrade_requests_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'upgrade requests are never deleted' USING ERRCODE = 'WU002';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'pending' THEN
      RAISE EXCEPTION 'an upgrade request starts pending' USING ERRCODE = 'WU002';
    END IF;
    IF (SELECT rank FROM plans WHERE plan = NEW.requested_plan) <= (SELECT rank FROM plans WHERE plan = NEW.from_plan) THEN
      RAISE EXCEPTION 'plan % is not above %', NEW.requested_plan, NEW.from_plan USING ERRCODE = 'WU001';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status <> 'pending' THEN
    RAISE EXCEPTION 'upgrade request % is % and cannot change', OLD.request_id, OLD.status USING ERRCODE = 'WU002';
  END IF;
  IF NEW.status = 'pending' THEN
    RAISE EXCEPTION 'a pending upgrade request can only be approved, rejected or cancelled' USING ERRCODE = 'WU002';
  END IF;
  IF NEW.request_id <> OLD.request_id OR NEW.tenant_id <> OLD.tenant_id OR NEW.from_plan <> OLD.from_plan
     OR NEW.requested_plan <> OLD.requested_plan OR NEW.reason <> OLD.reason OR NEW.created_at <> OLD.created_at
     OR NEW.requested_by IS DISTINCT FROM OLD.requested_by THEN
    RAISE EXCEPTION 'what was requested cannot change' USING ERRCODE = 'WU002';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION upgrade_requests_guard() IS
  'An upgrade request starts pending for a higher plan, moves once to approved, rejected or cancelled, keeps what was requested and is never deleted (WU001, WU002).';
CREATE TRIGGER upgrade_requests_guard BEFORE INSERT OR UPDATE OR DELETE ON upgrade_requests
  FOR EACH ROW EXECUTE FUNCTION upgrade_requests_guard();

-- A tenant's plan moves only up, and only with the approved upgrade request that moves it, named
-- in the same UPDATE (plan_request_id, set by upgrade_request_approve()), so neither a code path nor
-- a stray UPDATE can change it. The request is read in the tenant's own rows, which on a
-- distributed cluster sit on the shard this trigger runs on (docs/scaling.md): no session flag has
-- to reach that node.
CREATE FUNCTION tenants_plan_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NEW.plan IS DISTINCT FROM OLD.plan THEN
    IF NEW.plan_request_id IS NOT DISTINCT FROM OLD.plan_request_id
       OR NOT EXISTS (SELECT 1 FROM upgrade_requests u
                      WHERE u.tenant_id = OLD.tenant_id AND u.request_id = NEW.plan_request_id
                        AND u.status = 'approved' AND u.requested_plan = NEW.plan) THEN
      RAISE EXCEPTION 'the plan of % changes only through an approved upgrade request', OLD.tenant_id USING ERRCODE = 'WU003';
    END IF;
    IF (SELECT rank FROM plans WHERE plan = NEW.plan) <= (SELECT rank FROM plans WHERE plan = OLD.plan) THEN
      RAISE EXCEPTION 'plan % is not above %', NEW.plan, OLD.plan USING ERRCODE = 'WU001';
    END IF;
  ELSIF NEW.plan_request_id IS DISTINCT FROM OLD.plan_request_id THEN
    RAISE EXCEPTION 'the upgrade request behind the plan of % changes only with the plan', OLD.tenant_id USING ERRCODE = 'WU003';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION tenants_plan_guard() IS
  'A tenant''s plan changes only together with plan_request_id naming a new approved upgrade request of the tenant for exactly that plan '
  '(upgrade_request_approve(); WU003), and only to a higher-ranked plan (WU001).';
CREATE TRIGGER tenants_plan_guard BEFORE UPDATE OF plan, plan_request_id ON tenants
  FOR EACH ROW EXECUTE FUNCTION tenants_plan_guard();

-- Request-and-cancel loops are bounded: at most this many requests per tenant per UTC day (WU005).
CREATE FUNCTION upgrade_requests_daily_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 10 $$;
COMMENT ON FUNCTION upgrade_requests_daily_cap() IS 'Most upgrade requests one tenant makes per UTC day (WU005 beyond).';

-- p_requested_by: the asking member, an owner (NULL: an operator).
CREATE FUNCTION upgrade_request_create(p_request_id text, p_tenant_id text, p_plan text, p_reason text, p_requested_by text)
RETURNS TABLE (request_id text, status text, requested_plan text, reason text, created_at text, requested_by text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_current text;
  v upgrade_requests;
BEGIN
  SELECT t.plan INTO v_current FROM tenants t WHERE t.tenant_id = p_tenant_id;
  IF v_current IS NULL THEN
    RAISE EXCEPTION 'unknown tenant %', p_tenant_id USING ERRCODE = 'WU004';
  END IF;
  PERFORM member_actor_check(p_tenant_id, p_requested_by, 'owner');
  IF NOT EXISTS (SELECT 1 FROM plans WHERE plan = p_plan) THEN
    RAISE EXCEPTION 'unknown plan %', p_plan USING ERRCODE = 'WU001';
  END IF;
  -- One tenant's requests take turns, so two cannot both pass at cap - 1.
  PERFORM pg_advisory_xact_lock(hashtext('warden.upgrade_requests'), hashtext(p_tenant_id));
  IF (SELECT count(*) FROM upgrade_requests u WHERE u.tenant_id = p_tenant_id
        AND u.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') >= upgrade_requests_daily_cap() THEN
    RAISE EXCEPTION 'tenant % made % upgrade requests today', p_tenant_id, upgrade_requests_daily_cap() USING ERRCODE = 'WU005';
  END IF;
  IF EXISTS (SELECT 1 FROM upgrade_requests u WHERE u.tenant_id = p_tenant_id AND u.status = 'pending') THEN
    RAISE EXCEPTION 'tenant % has a pending upgrade request', p_tenant_id USING ERRCODE = 'WU006';
  END IF;
  -- The time formed after the insert: a distributed cluster refuses iso_time() in RETURNING (docs/scaling.md).
  INSERT INTO upgrade_requests AS u (request_id, tenant_id, from_plan, requested_plan, reason, requested_by)
  VALUES (p_request_id, p_tenant_id, v_current, p_plan, p_reason, p_requested_by)
  RETURNING u.* INTO v;
  RETURN QUERY SELECT v.request_id, v.status, v.requested_plan, v.reason, iso_time(v.created_at), v.requested_by;
END $$;
COMMENT ON FUNCTION upgrade_request_create(text, text, text, text, text) IS
  'An owner of a tenant (WT001/WT020 otherwise; NULL: an operator) asks for a higher plan. WU001 for an unknown or not-higher plan; WU006 while a request is pending; WU005 beyond upgrade_requests_daily_cap() requests today (UTC).';

CREATE FUNCTION upgrade_request_cancel(p_tenant_id text, p_request_id text)
RETURNS TABLE (request_id text, status text, requested_plan text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- The row lock makes a cancel and an operator's approve of one request take turns; the
  -- second finds it no longer pending (WU002 from the guard).
  PERFORM 1 FROM upgrade_requests u WHERE u.request_id = p_request_id AND u.tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN; -- unknown, or another tenant's: the caller answers 404
  END IF;
  RETURN QUERY
    UPDATE upgrade_requests u SET status = 'cancelled', cancelled_at = now()
    WHERE u.tenant_id = p_tenant_id AND u.request_id = p_request_id
    RETURNING u.request_id, u.status, u.requested_plan;
END $$;
COMMENT ON FUNCTION upgrade_request_cancel(text, text) IS
  'The requester withdraws a pending request. No row: not this tenant''s request. WU002: not pending.';

-- The review procedures' shared first step: a named reviewer, and the request locked (so a
-- cancel and a review of one request take turns) and still pending.
CREATE FUNCTION upgrade_request_take_for_review(p_request_id text, p_reviewer text) RETURNS upgrade_requests
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r upgrade_requests%ROWTYPE;
BEGIN
  IF p_reviewer IS NULL OR btrim(p_reviewer) = '' THEN
    RAISE EXCEPTION 'name the reviewer' USING ERRCODE = 'WU004';
  END IF;
  -- The request's tenant first (an operator names the request alone), then the row locked in its
  -- tenant, in a statement of its own (on a distributed cluster, a locking read names its tenant).
  SELECT x.tenant_id INTO r.tenant_id FROM upgrade_requests x WHERE x.request_id = p_request_id LIMIT 1;
  SELECT * INTO r FROM upgrade_requests u WHERE u.tenant_id = r.tenant_id AND u.request_id = p_request_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no upgrade request %', p_request_id USING ERRCODE = 'WU004';
  END IF;
  IF r.status <> 'pending' THEN
    RAISE EXCEPTION 'upgrade request % is %', p_request_id, r.status USING ERRCODE = 'WU002';
  END IF;
  RETURN r;
END $$;
COMMENT ON FUNCTION upgrade_request_take_for_review(text, text) IS
  'Locks a pending upgrade request for review; WU004 without a reviewer or for an unknown request, WU002 when it is not pending.';

-- The review email goes through the mail outbox in the review's own transaction, so a committed
-- review always gets its email and a rolled-back one never does.
CREATE FUNCTION upgrade_request_notify(p_tenant_id text, p_email text, p_kind text, p_data jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM mail_enqueue(p_kind, p_email, p_tenant_id, p_data);
END $$;
COMMENT ON FUNCTION upgrade_request_notify(text, text, text, jsonb) IS 'Queues a review email in the review''s own transaction.';

CREATE FUNCTION upgrade_request_approve(p_request_id text, p_reviewer text)
RETURNS TABLE (request_id text, tenant_id text, status text, plan text, reviewed_by text, reviewed_at text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r upgrade_requests%ROWTYPE;
  v_email text;
BEGIN
  r := upgrade_request_take_for_review(p_request_id, p_reviewer);
  UPDATE upgrade_requests u SET status = 'approved', reviewed_at = now(), reviewed_by = btrim(p_reviewer)
    WHERE u.tenant_id = r.tenant_id AND u.request_id = p_request_id;
  -- The plan changes in this same transaction, naming the request the guard checks (tenants_plan_guard());
  -- limits are read from the plan on every call, so they rise the moment this commits.
  UPDATE tenants t SET plan = r.requested_plan, plan_request_id = r.request_id WHERE t.tenant_id = r.tenant_id;
  v_email := tenant_contact_email(r.tenant_id);
  PERFORM upgrade_request_notify(r.tenant_id, v_email, 'upgrade_approved',
    jsonb_build_object('request_id', r.request_id, 'plan', r.requested_plan, 'previous_plan', r.from_plan));
  PERFORM audit_operator_event(r.tenant_id, 'upgrade.approved', p_reviewer,
    jsonb_build_object('request_id', r.request_id, 'plan', r.requested_plan, 'previous_plan', r.from_plan));
  RETURN QUERY
    SELECT u.request_id, u.tenant_id, u.status, u.requested_plan, u.reviewed_by, iso_time(u.reviewed_at)
    FROM upgrade_requests u WHERE u.tenant_id = r.tenant_id AND u.request_id = p_request_id;
END $$;
COMMENT ON FUNCTION upgrade_request_approve(text, text) IS
  'Operator approval: the request becomes approved and the tenant moves to the requested plan in one transaction; the tenant is emailed '
  'and the audit event upgrade.approved is queued (audit_outbox).';

CREATE FUNCTION upgrade_request_reject(p_request_id text, p_reviewer text, p_note text)
RETURNS TABLE (request_id text, tenant_id text, status text, review_note text, reviewed_by text, reviewed_at text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r upgrade_requests%ROWTYPE;
BEGIN
  IF p_note IS NULL OR btrim(p_note) = '' THEN
    RAISE EXCEPTION 'a rejection needs a note for the customer' USING ERRCODE = 'WU004';
  END IF;
  r := upgrade_request_take_for_review(p_request_id, p_reviewer);
  UPDATE upgrade_requests u SET status = 'rejected', reviewed_at = now(), reviewed_by = btrim(p_reviewer), review_note = btrim(p_note)
    WHERE u.tenant_id = r.tenant_id AND u.request_id = p_request_id;
  PERFORM upgrade_request_notify(r.tenant_id, tenant_contact_email(r.tenant_id), 'upgrade_rejected',
    jsonb_build_object('request_id', r.request_id, 'plan', r.requested_plan, 'review_note', btrim(p_note)));
  PERFORM audit_operator_event(r.tenant_id, 'upgrade.rejected', p_reviewer, jsonb_build_object('request_id', r.request_id, 'plan', r.requested_plan));
  RETURN QUERY
    SELECT u.request_id, u.tenant_id, u.status, u.review_note, u.reviewed_by, iso_time(u.reviewed_at)
    FROM upgrade_requests u WHERE u.tenant_id = r.tenant_id AND u.request_id = p_request_id;
END $$;
COMMENT ON FUNCTION upgrade_request_reject(text, text, text) IS
  'Operator rejection with a note the customer sees; the tenant is emailed and the audit event upgrade.rejected is queued (audit_outbox). A new request may follow.';

CREATE FUNCTION ops_upgrades_pending()
RETURNS TABLE (request_id text, tenant_id text, email text, current_plan text, requested_plan text, reason text, created_at text, age text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  r record;
BEGIN
  -- PL/pgSQL, each request's contact read in a statement of its own: on a distributed cluster a
  -- function called per row of a statement over tenant tables runs on the shards, where it may not
  -- read them (docs/scaling.md).
  FOR r IN
    SELECT u.request_id, u.tenant_id, t.plan, u.requested_plan, u.reason, u.created_at
    FROM upgrade_requests u JOIN tenants t ON t.tenant_id = u.tenant_id
    WHERE u.status = 'pending'
    ORDER BY u.created_at, u.request_id
  LOOP
    RETURN QUERY SELECT r.request_id, r.tenant_id, tenant_contact_email(r.tenant_id), r.plan, r.requested_plan, r.reason, iso_time(r.created_at),
                        justify_interval(date_trunc('minute', now() - r.created_at))::text;
  END LOOP;
END $$;
COMMENT ON FUNCTION ops_upgrades_pending() IS 'Pending upgrade requests, oldest first, for operator review.';

CREATE FUNCTION ops_tenant_show(p_tenant_id text)
RETURNS TABLE (tenant_id text, email text, plan text, email_verified boolean, created_at text,
               keys_active bigint, granted_features text, upgrade_requests text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  -- Read first, in a statement of its own, as in ops_upgrades_pending().
  v_email text := tenant_contact_email(p_tenant_id);
BEGIN
  RETURN QUERY
    SELECT t.tenant_id, v_email, t.plan,
           (SELECT a.email_verified_at IS NOT NULL FROM accounts a WHERE a.email = v_email), iso_time(t.created_at),
           (SELECT count(*) FROM api_keys k WHERE k.tenant_id = p_tenant_id AND k.status = 'active'),
           coalesce((SELECT string_agg(g.feature, ', ' ORDER BY g.feature) FROM feature_grants g WHERE g.tenant_id = p_tenant_id), ''),
           coalesce((SELECT string_agg(u.request_id || ' ' || u.requested_plan || ' ' || u.status, '; ' ORDER BY u.created_at DESC)
                     FROM upgrade_requests u WHERE u.tenant_id = p_tenant_id), '')
    FROM tenants t WHERE t.tenant_id = p_tenant_id;
END $$;
COMMENT ON FUNCTION ops_tenant_show(text) IS 'One tenant at a glance for an operator.';

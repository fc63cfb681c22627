-- Human approval of risky actions (docs/api.md, "Approvals"). A protect decided by a
-- require_approval rule is stored DENIED (a client that knows nothing of approvals fails closed)
-- and opens an approval, bound to that receipt's content_hash (the action hash). Members whose role
-- the rule's terms name vote; each vote, and the outcome, is a signed receipt of the tenant's log.
-- The states, enforced here whoever writes:
--   pending -> approved | denied | expired | cancelled,   approved -> executed.
-- Nothing ever approves by default: expiry is a denial, and one deny vote denies.

CREATE TABLE approvals (
  approval_id         text NOT NULL CHECK (approval_id ~ '^apv_[0-9A-Za-z]{22}$'),
  tenant_id           text NOT NULL REFERENCES tenants (tenant_id),
  protect_receipt_id  text NOT NULL,
  key_id              text NOT NULL,
  -- The member who created the calling key: they may not approve their own bot's request.
  key_created_by      text,
  action_hash         text NOT NULL CHECK (action_hash ~ '^0x[0-9a-f]{64}$'),
  rule                text NOT NULL,
  quorum              integer NOT NULL CHECK (quorum BETWEEN 1 AND 5),
  roles               text[] NOT NULL CHECK (cardinality(roles) BETWEEN 1 AND 5
                                             AND roles <@ ARRAY['owner', 'admin', 'developer', 'approver', 'viewer']),
  execute_within      integer NOT NULL CHECK (execute_within BETWEEN 60 AND 86400),
  created_at          timestamptz NOT NULL,
  expires_at          timestamptz NOT NULL,
  status              text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled', 'executed')),
  outcome_receipt_id  text,
  decided_at          timestamptz,
  execute_before      timestamptz,
  execute_receipt_id  text,
  -- Keyed by tenant first, as every tenant table (docs/scaling.md); what an approval names is its
  -- tenant's.
  PRIMARY KEY (tenant_id, approval_id),
  CONSTRAINT approvals_protect_receipt_id_key UNIQUE (tenant_id, protect_receipt_id),
  CONSTRAINT approvals_outcome_receipt_id_key UNIQUE (tenant_id, outcome_receipt_id),
  CONSTRAINT approvals_execute_receipt_id_key UNIQUE (tenant_id, execute_receipt_id),
  CONSTRAINT approvals_protect_receipt_id_fkey FOREIGN KEY (tenant_id, protect_receipt_id) REFERENCES receipts (tenant_id, receipt_id),
  CONSTRAINT approvals_outcome_receipt_id_fkey FOREIGN KEY (tenant_id, outcome_receipt_id) REFERENCES receipts (tenant_id, receipt_id),
  CONSTRAINT approvals_execute_receipt_id_fkey FOREIGN KEY (tenant_id, execute_receipt_id) REFERENCES receipts (tenant_id, receipt_id),
  CONSTRAINT approvals_key_id_fkey FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id),
  CONSTRAINT approvals_key_created_by_fkey FOREIGN KEY (tenant_id, key_created_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT approvals_expiry_in_terms CHECK (expires_at > created_at AND expires_at <= created_at + interval '604800 seconds'),
  CONSTRAINT approvals_outcome_once CHECK ((status = 'pending') = (outcome_receipt_id IS NULL) AND (status = 'pending') = (decided_at IS NULL)),
  CONSTRAINT approvals_execute_window CHECK ((status IN ('approved', 'executed')) = (execute_before IS NOT NULL)),
  CONSTRAINT approvals_executed_once CHECK ((status = 'executed') = (execute_receipt_id IS NOT NULL))
);
-- The sweeper's due list, a tenant's pending count (the cap), and a tenant's list newest first.
CREATE INDEX approvals_due ON approvals (expires_at) WHERE status = 'pending';
CREATE INDEX approvals_tenant_pending ON approvals (tenant_id) WHERE status = 'pending';
CREATE INDEX approvals_tenant_list ON approvals (tenant_id, created_at DESC, approval_id DESC);
-- One approval per (key, action hash) while it is pending: a retry of the same protect by the same
-- key answers that approval (receipt_approval_rules()), and no writer can open a second.
CREATE UNIQUE INDEX approvals_one_pending ON approvals (tenant_id, key_id, action_hash) WHERE status = 'pending';
-- A key's latest approval of an action, which a retry answers (receipt_approval_answer()).
CREATE INDEX approvals_by_action ON approvals (tenant_id, key_id, action_hash, created_at DESC);

CREATE TABLE approval_votes (
  tenant_id    text NOT NULL,
  approval_id  text NOT NULL,
  member_id    text NOT NULL,
  -- The person behind the membership: a quorum counts people, so one who leaves and is invited
  -- back (a new member_id) still has one vote.
  account_id   text NOT NULL REFERENCES accounts (account_id),
  vote         text NOT NULL CHECK (vote IN ('approve', 'deny')),
  receipt_id   text NOT NULL,
  voted_at     timestamptz NOT NULL,
  -- The vote's receipt says so when a single-member tenant's owner approved their own key's request.
  self_approved boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, approval_id, account_id),
  CONSTRAINT approval_votes_receipt_id_key UNIQUE (tenant_id, receipt_id),
  CONSTRAINT approval_votes_approval_id_fkey FOREIGN KEY (tenant_id, approval_id) REFERENCES approvals (tenant_id, approval_id),
  CONSTRAINT approval_votes_member_id_fkey FOREIGN KEY (tenant_id, member_id) REFERENCES members (tenant_id, member_id),
  CONSTRAINT approval_votes_receipt_id_fkey FOREIGN KEY (tenant_id, receipt_id) REFERENCES receipts (tenant_id, receipt_id)
);

CREATE FUNCTION approvals_pending_cap() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 100 $$;
COMMENT ON FUNCTION approvals_pending_cap() IS 'At most this many pending approvals per tenant (WQ004 beyond).';

-- -------------------------------------------------------------------------------------------------
-- The state machine. Any UPDATE goes through here: identity never changes, and only the moves of
-- the header above, each with what justifies it. No approval is ever deleted.
CREATE FUNCTION approvals_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_approves integer;
  v_denies integer;
BEGIN
  IF TG_OP <> 'UPDATE' THEN
    RAISE EXCEPTION 'approvals are never deleted' USING ERRCODE = 'WV007';
  END IF;
  IF (NEW.approval_id, NEW.tenant_id, NEW.protect_receipt_id, NEW.key_id, NEW.key_created_by, NEW.action_hash, NEW.rule, NEW.quorum,
      NEW.roles, NEW.execute_within, NEW.created_at, NEW.expires_at)
     IS DISTINCT FROM
     (OLD.approval_id, OLD.tenant_id, OLD.protect_receipt_id, OLD.key_id, OLD.key_created_by, OLD.action_hash, OLD.rule, OLD.quorum,
      OLD.roles, OLD.execute_within, OLD.created_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'an approval''s request and terms never change' USING ERRCODE = 'WV007';
  END IF;
  IF OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'cancelled') THEN
    SELECT count(*) FILTER (WHERE v.vote = 'approve'), count(*) FILTER (WHERE v.vote = 'deny')
      INTO v_approves, v_denies FROM approval_votes v WHERE v.tenant_id = NEW.tenant_id AND v.approval_id = NEW.approval_id;
    IF NEW.status = 'approved' AND (v_approves < NEW.quorum OR v_denies > 0 OR NEW.decided_at >= NEW.expires_at
                                     OR NEW.execute_before IS DISTINCT FROM NEW.decided_at + make_interval(secs => NEW.execute_within)) THEN
      RAISE EXCEPTION 'approved needs a quorum of approve votes, no deny, before expiry' USING ERRCODE = 'WV007';
    ELSIF NEW.status = 'denied' AND v_denies = 0 THEN
      RAISE EXCEPTION 'denied needs a deny vote' USING ERRCODE = 'WV007';
    ELSIF NEW.status = 'expired' AND NEW.decided_at < NEW.expires_at THEN
      RAISE EXCEPTION 'an approval expires only once its time is up' USING ERRCODE = 'WV007';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'approved' AND NEW.status = 'executed'
     AND (OLD.outcome_receipt_id, OLD.decided_at, OLD.execute_before) IS NOT DISTINCT FROM (NEW.outcome_receipt_id, NEW.decided_at, NEW.execute_before) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'an approval % cannot become %', OLD.status, NEW.status USING ERRCODE = 'WV002';
END $$;
COMMENT ON FUNCTION approvals_guard() IS
  'The approvals'' state machine: pending -> approved (a quorum of approve votes, no deny, before expires_at; execute_before = decided_at + '
  'execute_within) | denied (a deny vote) | expired (decided at or after expires_at) | cancelled; approved -> executed. The request and its '
  'terms never change; nothing is deleted (WV007); any other move is WV002.';
CREATE TRIGGER approvals_guard BEFORE UPDATE OR DELETE ON approvals FOR EACH ROW EXECUTE FUNCTION approvals_guard();

-- The one checker of a vote, whoever inserts it (approval_vote() is the service's way in): the
-- approval pending and unexpired; the voter an active member of the tenant, the person that
-- membership is, with a role the terms name; one vote per person (not per membership); never the
-- person who created the calling key, through any of their memberships (unless the tenant has that
-- one member and its owner allowed self-approval); and recorded by the vote receipt that says
-- exactly this: approval, action hash, member, person, role and vote.
CREATE FUNCTION approval_votes_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  a approvals%ROWTYPE;
  v_role text;
  v_account text;
  v_creator text;
  v_allow_self boolean;
  v_members integer;
  r record;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    RAISE EXCEPTION 'votes are never changed or deleted' USING ERRCODE = 'WV007';
  END IF;
  SELECT * INTO a FROM approvals WHERE tenant_id = NEW.tenant_id AND approval_id = NEW.approval_id FOR UPDATE;
  IF a.status <> 'pending' OR NEW.voted_at >= a.expires_at THEN
    RAISE EXCEPTION 'the approval is not pending' USING ERRCODE = 'WV002';
  END IF;
  SELECT m.role, m.account_id INTO v_role, v_account FROM members m
  WHERE m.tenant_id = a.tenant_id AND m.member_id = NEW.member_id AND m.status = 'active';
  IF v_role IS NULL OR NOT (v_role = ANY (a.roles)) THEN
    RAISE EXCEPTION 'this member''s role may not vote on this approval' USING ERRCODE = 'WV006';
  END IF;
  IF NEW.account_id IS DISTINCT FROM v_account THEN
    RAISE EXCEPTION 'a vote names the person its membership is' USING ERRCODE = 'WV007';
  END IF;
  SELECT m.account_id INTO v_creator FROM members m WHERE m.tenant_id = a.tenant_id AND m.member_id = a.key_created_by;
  IF NEW.account_id = v_creator THEN
    SELECT t.allow_self_approval INTO v_allow_self FROM tenants t WHERE t.tenant_id = a.tenant_id;
    SELECT count(*) INTO v_members FROM members m WHERE m.tenant_id = a.tenant_id AND m.status = 'active';
    IF NOT (v_allow_self AND v_members = 1 AND v_role = 'owner') OR NOT NEW.self_approved THEN
      RAISE EXCEPTION 'the person who created the calling key may not vote on its request' USING ERRCODE = 'WV005';
    END IF;
  ELSIF NEW.self_approved THEN
    RAISE EXCEPTION 'only the key''s creator approves their own request' USING ERRCODE = 'WV007';
  END IF;
  IF EXISTS (SELECT 1 FROM approval_votes v WHERE v.tenant_id = NEW.tenant_id AND v.approval_id = NEW.approval_id AND v.account_id = NEW.account_id) THEN
    RAISE EXCEPTION 'this person has voted already' USING ERRCODE = 'WV003';
  END IF;
  -- As receipt_by_id() finds it, written out: on a cluster this runs on the tenant's shard.
  SELECT x.kind, x.protect_receipt_id, x.payload::jsonb AS p INTO r FROM receipts x
  WHERE x.tenant_id = NEW.tenant_id AND x.receipt_id >= NEW.receipt_id AND x.receipt_id <= NEW.receipt_id
  ORDER BY x.receipt_id LIMIT 1;
  IF r.kind = 'vote' AND r.p ->> 'action_hash' IS DISTINCT FROM a.action_hash THEN
    RAISE EXCEPTION 'the action changed since it was shown' USING ERRCODE = 'WV004';
  END IF;
  IF r.kind IS DISTINCT FROM 'vote' OR r.protect_receipt_id <> a.protect_receipt_id
     OR r.p ->> 'approval_id' IS DISTINCT FROM a.approval_id OR r.p ->> 'member_id' IS DISTINCT FROM NEW.member_id
     OR r.p ->> 'account_id' IS DISTINCT FROM NEW.account_id OR r.p ->> 'role' IS DISTINCT FROM v_role
     OR r.p ->> 'vote' IS DISTINCT FROM NEW.vote OR coalesce(r.p ->> 'self_approval' = 'true', false) IS DISTINCT FROM NEW.self_approved THEN
    RAISE EXCEPTION 'a vote needs the receipt that records exactly it' USING ERRCODE = 'WV007';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION approval_votes_guard() IS
  'The one checker of a vote: the approval pending and not expired (WV002); the member active in the tenant with a role the terms name '
  '(WV006); the vote''s account_id the person of that membership; not the person who created the calling key (through any membership) '
  'unless the tenant has that one member, its owner, with allow_self_approval (then self_approved; WV005); one per person (WV003); '
  'recorded by its vote receipt on the approval''s action hash (WV004) naming the same approval, member, person, role, vote and '
  'self-approval (WV007). Votes never change.';
CREATE TRIGGER approval_votes_guard BEFORE INSERT OR UPDATE OR DELETE ON approval_votes FOR EACH ROW EXECUTE FUNCTION approval_votes_guard();

-- -------------------------------------------------------------------------------------------------
-- Receipts of an approval (votes and outcomes) join the log one at a time, as audit receipts:
-- receipt_event_append() stores them, counting them toward no quota and not toward storage.
CREATE FUNCTION receipt_append_one(p_item json) RETURNS TABLE (seq bigint, prev_hash text, chain_hash text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  IF (p_item ->> 'kind') IS NULL OR (p_item ->> 'kind') NOT IN ('vote', 'approval') THEN
    RAISE EXCEPTION 'receipt_append_one() stores votes and approval outcomes, not %', coalesce(p_item ->> 'kind', 'NULL') USING ERRCODE = '22023';
  END IF;
  RETURN QUERY SELECT e.seq, e.prev_hash, e.chain_hash FROM receipt_event_append(json_build_array(p_item)) AS e;
END $$;
COMMENT ON FUNCTION receipt_append_one(json) IS
  'Stores one signed receipt of kind vote or approval ({receipt_id, tenant_id, key_id, kind, request_id, timestamp, decision, payload, '
  'content_hash, signature, protect_receipt_id}; 22023 for another kind) through receipt_event_append(); answers its link. Counts toward no quota.';

-- Every change of an approval's state is announced (channel approval, payload tenant:approval), so
-- that agents waiting on it wake without polling the database. Sent with each step's event
-- (approval_emit(), which every procedure that opens or moves an approval calls), in its
-- transaction (heard at commit), not by a trigger on approvals: on a cluster such a trigger runs
-- on the worker, where no instance listens and a NOTIFY stops a transaction over several workers
-- from committing (docs/scaling.md).
CREATE FUNCTION approval_announce(p_tenant_id text, p_approval_id text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_notify('approval', p_tenant_id || ':' || p_approval_id);
END $$;
COMMENT ON FUNCTION approval_announce(text, text) IS
  'Announces a new approval or a change of one on channel approval (tenant_id:approval_id), at commit. Called by approval_emit().';

-- A stored receipt as the API shows it, for the webhooks that carry it (a receiver verifies it
-- offline): its claims, links, payload and signature.
CREATE FUNCTION receipt_as_json(p_tenant_id text, p_receipt_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL, the probe of receipt_by_id() written out: a Citus cluster plans this statement as its
  -- tenant's, where it refuses a LANGUAGE sql function's statement over a distributed table.
  RETURN (
    SELECT jsonb_build_object('receipt_id', r.receipt_id, 'tenant_id', r.tenant_id, 'kind', r.kind, 'seq', r.seq, 'prev_hash', r.prev_hash,
                              'chain_hash', r.chain_hash, 'key_id', r.key_id, 'protect_receipt_id', r.protect_receipt_id, 'decision', r.decision,
                              'request_id', r.request_id, 'content_hash', r.content_hash, 'timestamp', iso_time(r.issued_at),
                              'payload', r.payload::jsonb, 'signature', r.signature)
    FROM receipts r
    WHERE r.tenant_id = p_tenant_id AND r.receipt_id >= p_receipt_id AND r.receipt_id <= p_receipt_id
    ORDER BY r.receipt_id LIMIT 1);
END $$;
COMMENT ON FUNCTION receipt_as_json(text, text) IS 'A stored receipt as the API shows it (payload as JSON), for webhook data.';

-- Tells the tenant's webhooks of a step of an approval (webhook_emit(), sql/schema/04_webhooks.sql),
-- with the signed receipt of that step, in the transaction of the step, and the agents waiting on
-- it (approval_announce()).
CREATE FUNCTION approval_emit(p_tenant_id text, p_type text, p_approval_id text, p_receipt_id text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM webhook_emit(p_tenant_id, p_type, jsonb_build_object('approval_id', p_approval_id, 'receipt', receipt_as_json(p_tenant_id, p_receipt_id)));
  PERFORM approval_announce(p_tenant_id, p_approval_id);
END $$;
COMMENT ON FUNCTION approval_emit(text, text, text, text) IS
  'Queues the approval event p_type (approval.requested, .approved, .denied, .expired, .cancelled, .executed) to the tenant''s webhooks, '
  'data {approval_id, receipt}: the step''s signed receipt, verifiable offline, and announces the change (approval_announce()). '
  'Called by the approvals'' procedures in their transaction.';

-- -------------------------------------------------------------------------------------------------
-- The pieces receipt_append() runs for approvals (sql/schema/14_receipt_append.sql).

-- What a retry answers: the key's latest approval of the same action (its protect receipt's
-- content_hash) while it is pending, approved and still executable, or denied or expired less than
-- the rule's expires_in ago. A cancelled or executed one, or an older outcome, lets it ask again.
CREATE FUNCTION receipt_approval_answer(p_tenant_id text, p_key_id text, p_action_hash text, p_at timestamptz) RETURNS json
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
  SELECT json_build_object('answered', true, 'approval_id', a.approval_id, 'status', a.status, 'expires_at', iso_time(a.expires_at),
                           'outcome_receipt_id', a.outcome_receipt_id)
  FROM (SELECT x.approval_id, x.status, x.created_at, x.expires_at, x.decided_at, x.execute_before, x.outcome_receipt_id FROM approvals x
        WHERE x.tenant_id = p_tenant_id AND x.key_id = p_key_id AND x.action_hash = p_action_hash
        ORDER BY x.created_at DESC LIMIT 1) a
  WHERE a.status = 'pending'
     OR (a.status = 'approved' AND p_at < a.execute_before)
     OR (a.status IN ('denied', 'expired') AND p_at < a.decided_at + (a.expires_at - a.created_at)));
END $$;
COMMENT ON FUNCTION receipt_approval_answer(text, text, text, timestamptz) IS
  'The approval a protect of this key and action hash at p_at answers instead of opening one: the latest, if pending, approved before its '
  'execute_before, or denied or expired less than its expires_in ago ({answered, approval_id, status, expires_at, outcome_receipt_id}); '
  'NULL: the protect opens a new one.';

-- Before linking: a protect under a require_approval rule answers the approval a retry finds
-- (receipt_approval_answer()), or the one an earlier item of the same call opens; the others open
-- one, and are refused when their tenant would have more pending approvals than it may.
CREATE FUNCTION receipt_approval_rules(p_tenant text, p_items receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v record;
  v_answer json;
  v_opener integer;
  v_opened integer;
BEGIN
  FOR v IN
    SELECT i.idx, i.tenant_id, i.key_id, i.content_hash, i.issued_at, i.approval,
           (SELECT count(*) FROM approvals a WHERE a.tenant_id = coalesce(p_tenant, i.tenant_id) AND a.status = 'pending') AS pending
    FROM unnest(p_items) AS i
    WHERE i.refusal IS NULL AND i.approval IS NOT NULL
    ORDER BY i.idx
  LOOP
    v_answer := receipt_approval_answer(v.tenant_id, v.key_id, v.content_hash, v.issued_at);
    IF v_answer IS NULL THEN
      -- The same action asked twice in one call: the later one answers the first's approval.
      SELECT min(o.idx) INTO v_opener FROM unnest(p_items) AS o
      WHERE o.idx < v.idx AND o.tenant_id = v.tenant_id AND o.key_id = v.key_id AND o.content_hash = v.content_hash
        AND o.approval IS NOT NULL AND NOT coalesce((o.approval ->> 'answered')::boolean, false);
      IF v_opener IS NOT NULL THEN
        IF p_items[v_opener + 1].refusal IS NOT NULL THEN
          p_items[v.idx + 1].refusal := p_items[v_opener + 1].refusal;
          CONTINUE;
        END IF;
        v_answer := json_build_object('answered', true, 'approval_id', p_items[v_opener + 1].approval ->> 'approval_id', 'status', 'pending',
                                      'expires_at', iso_time(p_items[v_opener + 1].issued_at
                                                             + make_interval(secs => (p_items[v_opener + 1].approval ->> 'expires_in')::integer)),
                                      'outcome_receipt_id', NULL);
      END IF;
    END IF;
    IF v_answer IS NOT NULL THEN
      p_items[v.idx + 1].approval := (v.approval::jsonb || v_answer::jsonb)::json;
      CONTINUE;
    END IF;
    SELECT count(*) INTO v_opened FROM unnest(p_items) AS o
    WHERE o.idx < v.idx AND o.tenant_id = v.tenant_id AND o.refusal IS NULL AND o.approval IS NOT NULL
      AND NOT coalesce((o.approval ->> 'answered')::boolean, false);
    IF v.pending + v_opened + 1 > approvals_pending_cap() THEN
      p_items[v.idx + 1].refusal := 'WQ004';
    END IF;
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_approval_rules(text, receipt_append_item[]) IS
  'The approval rules of receipt_append() (p_tenant: NULL, or the one tenant of the items), for protects with approval terms (approval not NULL): one that a retry answers '
  '(receipt_approval_answer(), or an earlier item of the call with the same key and content_hash) gets approval.answered and the '
  'answered approval; the others open one and are refused (WQ004) when their tenant would have more than approvals_pending_cap() '
  'pending approvals. Other items are returned as they came.';

-- After the insert: each stored protect that requires approval opens its approval, bound to its
-- content_hash; each eligible member is told by email (the link leads to the console; nothing
-- approves from the email).
CREATE FUNCTION receipt_approval_open(p_tenant text, p_items receipt_append_item[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  i record;
  t record;
  v_created_by text;
  v_expires_at timestamptz;
  v_to text;
BEGIN
  FOR i IN SELECT * FROM unnest(p_items) AS x
           WHERE x.refusal IS NULL AND x.approval IS NOT NULL AND NOT coalesce((x.approval ->> 'answered')::boolean, false)
           ORDER BY x.idx LOOP
    SELECT (i.approval ->> 'approval_id') AS approval_id, (i.approval ->> 'quorum')::integer AS quorum,
           ARRAY(SELECT json_array_elements_text(i.approval -> 'roles')) AS roles,
           (i.approval ->> 'expires_in')::integer AS expires_in, (i.approval ->> 'execute_within')::integer AS execute_within,
           i.approval ->> 'rule' AS rule, i.approval ->> 'action' AS action
      INTO t;
    -- Each statement names the item's tenant, and the values are computed before it: on a Citus
    -- cluster a write of one shard, with no STABLE function for the shard to evaluate.
    v_expires_at := i.issued_at + make_interval(secs => t.expires_in);
    SELECT k.created_by INTO v_created_by FROM api_keys k WHERE k.tenant_id = i.tenant_id AND k.key_id = i.key_id;
    IF FOUND THEN
      -- Through a remote MCP gateway the asker is the person who signed the agent in (the payload's
      -- principal.member_id), not whoever made the gateway's key: they may not approve themselves.
      v_created_by := coalesce(i.payload::jsonb -> 'principal' ->> 'member_id', v_created_by);
      INSERT INTO approvals (approval_id, tenant_id, protect_receipt_id, key_id, key_created_by, action_hash, rule, quorum, roles,
                             execute_within, created_at, expires_at)
      VALUES (t.approval_id, i.tenant_id, i.receipt_id, i.key_id, v_created_by, i.content_hash, t.rule, t.quorum, t.roles,
              t.execute_within, i.issued_at, v_expires_at);
    END IF;
    -- The addresses first, then the mail: the outbox is not a table of the tenant's shard.
    FOR v_to IN
      SELECT a.email
      FROM members m JOIN accounts a ON a.account_id = m.account_id
      WHERE m.tenant_id = i.tenant_id AND m.status = 'active' AND m.role = ANY (t.roles)
        -- Not the person who created the key, whose vote approval_votes_guard() refuses (WV005), unless
        -- it would take it: the tenant's one member, its owner, with allow_self_approval.
        AND (m.account_id IS DISTINCT FROM (SELECT c.account_id FROM approvals ap JOIN members c ON c.tenant_id = ap.tenant_id AND c.member_id = ap.key_created_by
                                             WHERE ap.tenant_id = i.tenant_id AND ap.approval_id = t.approval_id)
             OR (m.role = 'owner'
                 AND (SELECT tn.allow_self_approval FROM tenants tn WHERE tn.tenant_id = i.tenant_id)
                 AND (SELECT count(*) FROM members c WHERE c.tenant_id = i.tenant_id AND c.status = 'active') = 1))
      ORDER BY m.joined_at, m.member_id
    LOOP
      PERFORM mail_enqueue('approval_requested', v_to, i.tenant_id,
                           jsonb_build_object('approval_id', t.approval_id, 'action', t.action, 'rule', t.rule, 'expires_at', iso_time(v_expires_at)));
    END LOOP;
    PERFORM approval_emit(i.tenant_id, 'approval.requested', t.approval_id, i.receipt_id);
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_approval_open(text, receipt_append_item[]) IS
  'After receipt_append() stored its items (p_tenant: NULL, or the one tenant of the items): opens the approval of each stored protect whose item carries approval terms and answers none ({approval_id, '
  'quorum, roles, expires_in, execute_within, rule, action}), bound to its content_hash and calling key, expiring expires_in after the '
  'receipt, queues an approval_requested email to each active member whose role may vote (not the key''s creator, whose vote would be '
  'refused, unless self-approval is allowed), and an approval.requested webhook event.';

-- After the insert: an execute of an approved approval's outcome receipt moves it to executed.
CREATE FUNCTION receipt_approval_executed(p_tenant text, p_items receipt_append_item[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  x record;
  v_approval text;
BEGIN
  -- Per stored execute, one statement naming its tenant: the approval found as receipt_by_id() finds
  -- a receipt (a range of one id, in order: only approvals_outcome_receipt_id_key serves it, where an
  -- equality could take approvals_tenant_list and read every approval of the tenant), locked, then
  -- updated by its row's address (ctid, stable while locked).
  FOR x IN SELECT i.tenant_id, i.receipt_id, i.protect_receipt_id FROM unnest(p_items) AS i WHERE i.refusal IS NULL AND i.kind = 'execute' ORDER BY i.idx LOOP
    UPDATE approvals a SET status = 'executed', execute_receipt_id = x.receipt_id
    WHERE a.tenant_id = x.tenant_id
      AND a.ctid = (SELECT y.ctid FROM approvals y
                    WHERE y.tenant_id = x.tenant_id AND y.outcome_receipt_id >= x.protect_receipt_id AND y.outcome_receipt_id <= x.protect_receipt_id
                    ORDER BY y.outcome_receipt_id LIMIT 1 FOR UPDATE)
    RETURNING a.approval_id INTO v_approval;
    IF FOUND THEN
      PERFORM approval_emit(x.tenant_id, 'approval.executed', v_approval, x.receipt_id);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_approval_executed(text, receipt_append_item[]) IS
  'After receipt_append() stored its items (p_tenant: NULL, or the one tenant of the items): the approval whose outcome receipt a stored execute names becomes executed (approval.executed to webhooks).';

-- -------------------------------------------------------------------------------------------------
-- A vote: its receipt (signed by the service) and its row, in one transaction. What the vote is
-- comes from its signed payload alone; approval_votes_guard() checks it. The answer says where the
-- approval stands and which outcome, if any, is now due, for the caller to settle.
CREATE FUNCTION approval_vote(p_receipt json)
RETURNS TABLE (approves integer, denies integer, quorum integer, due text, vote_receipt_ids text[])
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  a approvals%ROWTYPE;
  v_tenant text := p_receipt ->> 'tenant_id';
  p jsonb := (p_receipt ->> 'payload')::jsonb;
BEGIN
  PERFORM receipt_heads_lock(ARRAY[v_tenant]);
  SELECT * INTO a FROM approvals x WHERE x.tenant_id = v_tenant AND x.approval_id = p ->> 'approval_id' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such approval' USING ERRCODE = 'WV001';
  END IF;
  PERFORM receipt_append_one(p_receipt);
  INSERT INTO approval_votes (tenant_id, approval_id, member_id, account_id, vote, receipt_id, voted_at, self_approved)
  VALUES (a.tenant_id, a.approval_id, p ->> 'member_id', p ->> 'account_id', p ->> 'vote', p_receipt ->> 'receipt_id',
          (p_receipt ->> 'timestamp')::timestamptz, coalesce((p ->> 'self_approval')::boolean, false));
  RETURN QUERY
    SELECT t.approves, t.denies, a.quorum,
           CASE WHEN t.denies > 0 THEN 'denied' WHEN t.approves >= a.quorum THEN 'approved' END, t.ids
    FROM (SELECT count(*) FILTER (WHERE v.vote = 'approve')::integer AS approves, count(*) FILTER (WHERE v.vote = 'deny')::integer AS denies,
                 array_agg(v.receipt_id ORDER BY v.voted_at, v.receipt_id) AS ids
          FROM approval_votes v WHERE v.tenant_id = a.tenant_id AND v.approval_id = a.approval_id) t;
END $$;
COMMENT ON FUNCTION approval_vote(json) IS
  'Records the vote its signed receipt (kind vote) states: WV001 no such approval of the receipt''s tenant; every rule of a vote is '
  'approval_votes_guard()''s (WV002 to WV007). Answers the tally, the outcome now due (approved: a quorum of people approved; denied: '
  'one denied; NULL: none yet) and the votes'' receipt ids in order.';

-- The outcome: its receipt (kind approval; ALLOWED for approved, DENIED otherwise) and the move.
CREATE FUNCTION approval_settle(p_approval_id text, p_status text, p_receipt json)
RETURNS TABLE (status text, decided_at text, execute_before text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  a approvals%ROWTYPE;
  v_at timestamptz := (p_receipt ->> 'timestamp')::timestamptz;
  v_by text := (p_receipt ->> 'payload')::jsonb -> 'outcome' ->> 'cancelled_by';
  v_execute_before timestamptz;
BEGIN
  PERFORM receipt_heads_lock(ARRAY[p_receipt ->> 'tenant_id']);
  SELECT * INTO a FROM approvals x WHERE x.approval_id = p_approval_id AND x.tenant_id = p_receipt ->> 'tenant_id' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such approval' USING ERRCODE = 'WV001';
  END IF;
  IF a.status <> 'pending' THEN
    RAISE EXCEPTION 'the approval is not pending' USING ERRCODE = 'WV002';
  END IF;
  IF (p_status = 'approved') <> (p_receipt ->> 'decision' = 'ALLOWED') OR p_receipt ->> 'kind' <> 'approval'
     OR p_receipt ->> 'protect_receipt_id' IS DISTINCT FROM a.protect_receipt_id
     OR (p_status = 'cancelled') <> (v_by IS NOT NULL) THEN
    RAISE EXCEPTION 'an outcome needs its receipt: kind approval, ALLOWED exactly when approved, naming the protect (and who cancelled)' USING ERRCODE = 'WV007';
  END IF;
  -- A request is withdrawn by the key that asked, or by a person who runs the tenant's approvals.
  IF v_by LIKE 'key\_%' AND v_by <> a.key_id THEN
    RAISE EXCEPTION 'only the key that asked may cancel its approval' USING ERRCODE = 'WV008';
  END IF;
  IF v_by LIKE 'mbr\_%' AND NOT EXISTS (SELECT 1 FROM members m WHERE m.tenant_id = a.tenant_id AND m.member_id = v_by
                                                                    AND m.status = 'active' AND m.role IN ('owner', 'admin')) THEN
    RAISE EXCEPTION 'cancelling an approval needs the admin role' USING ERRCODE = 'WT021';
  END IF;
  PERFORM receipt_append_one(p_receipt);
  -- Computed apart: a Citus cluster evaluates no STABLE function (timestamptz arithmetic) inside a CASE of an UPDATE.
  IF p_status = 'approved' THEN
    v_execute_before := v_at + make_interval(secs => a.execute_within);
  END IF;
  UPDATE approvals x SET status = p_status, outcome_receipt_id = p_receipt ->> 'receipt_id', decided_at = v_at, execute_before = v_execute_before
  WHERE x.tenant_id = a.tenant_id AND x.approval_id = p_approval_id;
  PERFORM approval_emit(a.tenant_id, 'approval.' || p_status, p_approval_id, p_receipt ->> 'receipt_id');
  RETURN QUERY SELECT p_status, iso_time(v_at), iso_time(v_execute_before);
END $$;
COMMENT ON FUNCTION approval_settle(text, text, json) IS
  'Ends a pending approval as approved, denied, expired or cancelled with its signed outcome receipt (kind approval, ALLOWED exactly when '
  'approved, naming the protect receipt, and for a cancel who cancelled; WV007 otherwise); a cancel comes from the key that asked (WV008) '
  'or an active owner or admin (WT021); approvals_guard() checks that the votes or the clock justify it; the event '
  'approval.<status> goes to the tenant''s webhooks. WV001 no such approval of the receipt''s tenant, WV002 not pending.';

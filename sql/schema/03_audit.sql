-- The audit trail's one way in from operators (docs/api.md, "The audit trail"). Every event is a
-- signed receipt of kind "event" in the tenant's log (08_receipts.sql); a request's event is signed
-- by the service and appended in the transaction of its change (receipt_event_append()). An
-- operator's procedure (sql/ops/) cannot sign: the service holds the key. So it writes its event
-- here, in its own transaction, and the service's worker (src/audit/outbox.ts) signs it and
-- appends it to the log shortly after, marking the row appended in that same transaction: each row
-- becomes exactly one receipt, and the change and its pending event commit together.
-- Refusals: WR010 an outbox row changes other than by being appended once, or is deleted.

CREATE TABLE audit_outbox (
  id           bigint GENERATED ALWAYS AS IDENTITY,
  tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
  event        text NOT NULL CHECK (event ~ '^[a-z]+(_[a-z]+)*\.[a-z]+(_[a-z]+)*$'),
  -- Who did it: the reviewer an operator script names (`-v reviewer`), "operator" when it names none.
  operator     text NOT NULL CHECK (char_length(operator) BETWEEN 1 AND 200),
  target       jsonb NOT NULL CHECK (jsonb_typeof(target) = 'object'),
  -- When the change happened: the event's `at`, whenever it is signed.
  at           timestamptz NOT NULL DEFAULT now(),
  -- The receipt it became, set in the transaction that appended it (no foreign key: receipts take
  -- none, so that TRUNCATE of them stays refused by their own trigger, WR001).
  receipt_id   text,
  appended_at  timestamptz,
  -- Keyed by tenant first, as every tenant table (docs/scaling.md).
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT audit_outbox_receipt_id_key UNIQUE (tenant_id, receipt_id),
  CONSTRAINT audit_outbox_appended_matches_receipt CHECK ((receipt_id IS NULL) = (appended_at IS NULL))
);
CREATE INDEX audit_outbox_pending ON audit_outbox (tenant_id, id) WHERE receipt_id IS NULL;

CREATE FUNCTION audit_outbox_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.receipt_id IS NULL AND NEW.receipt_id IS NOT NULL
     AND NEW.id = OLD.id AND NEW.tenant_id = OLD.tenant_id AND NEW.event = OLD.event AND NEW.operator = OLD.operator
     AND NEW.target = OLD.target AND NEW.at = OLD.at THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'a pending audit event is only ever appended, once, and never deleted' USING ERRCODE = 'WR010';
END $$;
COMMENT ON FUNCTION audit_outbox_guard() IS
  'An audit_outbox row changes once, from pending to appended (its receipt_id set), and nothing else of it changes; never deleted (WR010).';
CREATE TRIGGER audit_outbox_guard BEFORE UPDATE OR DELETE ON audit_outbox
  FOR EACH ROW EXECUTE FUNCTION audit_outbox_guard();
CREATE TRIGGER audit_outbox_no_truncate BEFORE TRUNCATE ON audit_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION audit_outbox_guard();

-- The worker's batch (src/audit/outbox.ts): up to p_limit pending events, locked for its
-- transaction (another instance's skips them), each tenant's oldest first. A tenant at a time, the
-- one waiting longest first: a locking read names its tenant, as a cluster requires
-- (docs/scaling.md); the look for tenants locks nothing.
CREATE FUNCTION audit_outbox_claim(p_limit integer)
RETURNS TABLE (id bigint, tenant_id text, event text, operator text, target jsonb, at text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_tenant text;
  v_left integer := p_limit;
  r record;
BEGIN
  FOR v_tenant IN
    SELECT o.tenant_id FROM audit_outbox o WHERE o.receipt_id IS NULL GROUP BY o.tenant_id ORDER BY min(o.id)
  LOOP
    FOR r IN
      SELECT o.id, o.tenant_id, o.event, o.operator, o.target, o.at FROM audit_outbox o
      WHERE o.tenant_id = v_tenant AND o.receipt_id IS NULL ORDER BY o.id LIMIT v_left FOR UPDATE SKIP LOCKED
    LOOP
      id := r.id; tenant_id := r.tenant_id; event := r.event; operator := r.operator; target := r.target; at := iso_time(r.at);
      RETURN NEXT;
      v_left := v_left - 1;
    END LOOP;
    EXIT WHEN v_left <= 0;
  END LOOP;
END $$;
COMMENT ON FUNCTION audit_outbox_claim(integer) IS
  'Up to p_limit pending operators'' audit events, locked FOR UPDATE SKIP LOCKED, claimed tenant by tenant (the one waiting longest '
  'first), each tenant''s in queue order.';

-- Called by the operator procedures (upgrades, features, sessions) in their own transaction.
CREATE FUNCTION audit_operator_event(p_tenant_id text, p_event text, p_operator text, p_target jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO audit_outbox (tenant_id, event, operator, target)
  VALUES (p_tenant_id, p_event, coalesce(nullif(btrim(p_operator), ''), 'operator'), p_target);
END $$;
COMMENT ON FUNCTION audit_operator_event(text, text, text, jsonb) IS
  'Queues an operator''s audit event (actor {operator: p_operator, or "operator" when blank}) for the service to sign and append to the '
  'tenant''s receipt log; call it in the transaction of the change it records.';

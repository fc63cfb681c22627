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
CREATE INDEX audit_outbox_pending ON audit_outbox (id) WHERE receipt_id IS NULL;

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

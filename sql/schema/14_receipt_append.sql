-- Appending decisions: receipt_append(), the pipeline of named pieces over a batch's items. It is
-- defined after every file that defines one of its pieces (08_receipts.sql: parse, lock, execute
-- and quota rules, link, day counts; 12_approvals.sql: approval rules; 13_usage.sql: usage rules
-- and counters), so a reader meets each piece before the pipeline that runs them.

CREATE FUNCTION receipt_append(p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer, refusal text, approval json)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_append_item[] := receipt_append_parse(p_items);
BEGIN
  IF v_items IS NULL THEN
    RETURN;
  END IF;
  -- Locked before the rules read anything, so they see every earlier append of these tenants.
  PERFORM receipt_heads_lock(ARRAY(SELECT i.tenant_id FROM unnest(v_items) AS i));
  v_items := receipt_execute_rules(v_items);
  -- Before the quota, so that a decision made on stale usage counts toward nothing; again after
  -- the quota and approval rules, which may refuse an item whose addition a later one counted on.
  v_items := receipt_usage_rules(v_items, false);
  v_items := receipt_quota_rules(v_items);
  v_items := receipt_approval_rules(v_items);
  v_items := receipt_usage_rules(v_items, true);
  v_items := receipt_link(v_items);

  -- Checks the keys, moves the heads, inserts the accepted items and grows the stored tree.
  PERFORM receipt_log_store(v_items);
  PERFORM receipt_usage_add(v_items);
  PERFORM receipt_usage_counters_add(v_items);
  PERFORM receipt_approval_open(v_items);
  PERFORM receipt_approval_executed(v_items);

  RETURN QUERY
    SELECT i.idx, i.seq, i.prev_hash, i.chain_hash, i.quota_limit, i.quota_used, i.refusal,
           CASE WHEN (i.approval ->> 'answered')::boolean THEN i.approval END
    FROM unnest(v_items) AS i
    ORDER BY i.idx;
END $$;
COMMENT ON FUNCTION receipt_append(json) IS
  'Stores a JSON array of decisions ({receipt_id, tenant_id, key_id, kind, request_id, timestamp, decision, payload, content_hash, '
  'signature, protect_receipt_id, approval, usage}) as their tenants'' next receipts, in input order, and counts them against the plans; one row per item '
  '(idx 0-based; approval: the approval a retry answers, receipt_approval_rules()). Per item, first refusal wins: receipt_execute_rules() (WR002, WR003, WR004, WR007, WR010, WR011), then receipt_usage_rules() (WB002), then receipt_quota_rules() '
  '(WQ003, then WQ001 or WQ002), then receipt_approval_rules() (WQ004), then receipt_usage_rules() again (WB002); stored protects with approval terms open their approvals '
  '(receipt_approval_open()) and executes of outcomes mark them executed (receipt_approval_executed()). Refused items are not stored and count towards nothing. Raises 22007 for a timestamp not in iso_time() '
  'form, 22023 for a kind other than protect or execute (receipt_append_parse()). Agrees with appending the items one by one, '
  'except that an execute never finds a protect receipt of the same call (WR002), and that a second execute of one protect '
  'receipt is WR007 even when the first was refused for storage or quota.';

-- The decision hot path in fewer round trips (docs/performance.md):
-- receipt_append_batch() stores many decisions in one call and one commit (group commit), each
-- item in its own subtransaction so one item's refusal (quota, already executed, ...) does not
-- undo the others. Items are taken in tenant order, so batches of several instances lock tenant
-- heads in the same order and cannot deadlock.

CREATE FUNCTION receipt_append_batch(p_items jsonb)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it record;
  r record;
  v_constraint text;
BEGIN
  FOR it IN
    SELECT (e.ord - 1)::integer AS i, e.value AS v
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(value, ord)
    ORDER BY e.value ->> 'tenant_id', e.ord
  LOOP
    BEGIN
      SELECT a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used INTO r
      FROM receipt_append(it.v ->> 'receipt_id', it.v ->> 'tenant_id', it.v ->> 'key_id', it.v ->> 'kind',
                          it.v ->> 'request_id', it.v ->> 'timestamp', it.v ->> 'decision', it.v ->> 'payload',
                          it.v ->> 'content_hash', it.v ->> 'signature', it.v ->> 'protect_receipt_id') AS a;
      RETURN QUERY SELECT it.i, r.seq, r.prev_hash, r.chain_hash, r.quota_limit, r.quota_used, NULL::text, NULL::text, NULL::text;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT it.i, NULL::bigint, NULL::text, NULL::text, NULL::integer, NULL::integer, SQLSTATE, nullif(v_constraint, ''), SQLERRM;
    END;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_append_batch(jsonb) IS
  'receipt_append() for an array of items ({receipt_id, tenant_id, key_id, kind, request_id, timestamp, decision, payload, '
  'content_hash, signature, protect_receipt_id}) in one transaction; one result row per item (idx = its array position), '
  'with the SQLSTATE, constraint and message of its refusal instead of a receipt when it was refused.';

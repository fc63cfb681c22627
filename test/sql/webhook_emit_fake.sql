-- Tests only: a stand-in webhook_emit() that refuses (SQLSTATE WX999) with its arguments in the message for a key
-- labelled 'expiring-fake', and tells nothing for any other. Dropped by webhook_emit_fake_drop.sql.
CREATE FUNCTION webhook_emit(p_tenant_id text, p_type text, p_data jsonb) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
  IF p_data->>'label' = 'expiring-fake' THEN
    RAISE EXCEPTION '% % % %', p_tenant_id, p_type, p_data->>'key_id', p_data->>'threshold' USING ERRCODE = 'WX999';
  END IF;
  RETURN 0;
END $$;

-- $1 email (normalised). mfa_active: login asks for the second factor before a session.
SELECT t.tenant_id, t.password_hash, t.session_epoch,
       EXISTS (SELECT 1 FROM mfa_totp m WHERE m.tenant_id = t.tenant_id AND m.status = 'active') AS mfa_active
  FROM tenants t WHERE t.email = $1;

-- Changes the settings named (NULL: unchanged), and says what they were (for the audit event).
-- $1 tenant_id, $2 require_mfa, $3 allow_self_approval, $4 revoke_keys_on_member_removal
WITH old AS (SELECT t.tenant_id, t.require_mfa, t.allow_self_approval, t.revoke_keys_on_member_removal FROM tenants t WHERE t.tenant_id = $1 FOR NO KEY UPDATE)
UPDATE tenants t SET require_mfa = coalesce($2::boolean, old.require_mfa), allow_self_approval = coalesce($3::boolean, old.allow_self_approval),
       revoke_keys_on_member_removal = coalesce($4::boolean, old.revoke_keys_on_member_removal)
  FROM old
 WHERE t.tenant_id = old.tenant_id
RETURNING t.require_mfa, t.allow_self_approval, t.revoke_keys_on_member_removal,
          old.require_mfa AS was_require_mfa, old.allow_self_approval AS was_allow_self_approval,
          old.revoke_keys_on_member_removal AS was_revoke_keys_on_member_removal;
